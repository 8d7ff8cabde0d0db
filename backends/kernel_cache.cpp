#include "backends/kernel_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <vector>

#include "uops/error.h"

namespace uops {

namespace {

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string mode_text(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
  return text;
}

// A descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void refuse(const std::filesystem::path& dir, const std::string& why) {
  throw Error("the kernel cache directory " + dir.string() + " is unsafe: " + why +
              ": another user could put code of theirs where the cache is, and it would run as "
              "you. Use a private folder (chmod 700) whose every parent belongs to you or root "
              "and is writable by no one else, unless sticky as /tmp is (set UOPS_CACHE_DIR)");
}

// The cache folder itself must be the caller's and writable by no one else.
void check_private(const std::filesystem::path& dir, const struct stat& st) {
  if (st.st_uid != geteuid())
    throw Error("the kernel cache directory " + dir.string() + " belongs to another user (uid " +
                std::to_string(st.st_uid) +
                "): a kernel planted there would run as you. Use a private folder (chmod 700, or "
                "set UOPS_CACHE_DIR to a folder of your own)");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw Error("the kernel cache directory " + dir.string() +
                " is writable by group or others (mode " + mode_text(st.st_mode) +
                "): a kernel planted there would run as you. Use a private folder (chmod 700, or "
                "set UOPS_CACHE_DIR to a folder of your own)");
}

// A folder above the cache may be root's or the caller's, and writable by others only when
// sticky: then no one else may rename or delete what the caller put in it.
void check_ancestor(const std::filesystem::path& dir, const std::string& where,
                    const struct stat& st) {
  if (st.st_uid != 0 && st.st_uid != geteuid())
    refuse(dir, "its parent " + where + " belongs to another user (uid " +
                    std::to_string(st.st_uid) + ")");
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    refuse(dir, "its parent " + where + " is writable by group or others without the sticky bit " +
                    "(mode " + mode_text(st.st_mode) + ")");
}

// Opens the folder `dir` by walking its path from "/" one name at a time, each name looked up
// in the folder verified just before, and each folder checked through the descriptor that is
// then used: what is checked is what is used, whatever is renamed meanwhile. Every folder above
// passes check_ancestor and the last check_private. A symbolic link on the way is followed only
// when root or the caller owns it (its folder is verified like the others); its target is
// walked the same way. Missing folders are created 0700 when `create`.
Fd open_cache_folder(const std::filesystem::path& dir, bool create) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(dir, ec);
  if (ec)
    throw Error("cannot use the kernel cache directory " + dir.string() + ": " + ec.message());
  std::vector<std::string> todo;  // the names still to walk, the next one last
  auto push_path = [&](const std::filesystem::path& p) {
    std::vector<std::string> names;
    for (auto& part : p.relative_path()) names.push_back(part.string());
    todo.insert(todo.end(), names.rbegin(), names.rend());
  };
  push_path(absolute);
  std::vector<Fd> chain;  // "/" and the folders below it walked so far
  std::vector<std::string> names;
  auto where = [&] {
    std::string text;
    for (auto& n : names) text += "/" + n;
    return text.empty() ? std::string("/") : text;
  };
  auto fail = [&](const std::string& at, int err) -> Error {
    return Error("cannot use the kernel cache directory " + dir.string() + ": " + at + ": " +
                 std::strerror(err));
  };
  auto from_root = [&] {
    chain.clear();
    names.clear();
    chain.emplace_back(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (chain.back().get() < 0) throw fail("/", errno);
  };
  from_root();
  struct stat st {};
  int links = 0;
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (chain.size() > 1) {
        chain.pop_back();
        names.pop_back();
      }
      continue;
    }
    std::string at = where() + (names.empty() ? "" : "/") + name;
    int parent = chain.back().get();
    if (fstat(parent, &st) != 0) throw fail(where(), errno);
    check_ancestor(dir, where(), st);
    Fd next(openat(parent, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0 && errno == ENOENT && create) {
      if (mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) throw fail(at, errno);
      next = Fd(openat(parent, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    }
    if (next.get() < 0) throw fail(at, errno);
    if (fstat(next.get(), &st) != 0) throw fail(at, errno);
    if (S_ISLNK(st.st_mode)) {
      if (st.st_uid != 0 && st.st_uid != geteuid())
        refuse(dir, at + " is a symbolic link owned by another user (uid " +
                        std::to_string(st.st_uid) + ")");
      if (++links > 40) throw fail(at, ELOOP);
      char target[PATH_MAX];
      ssize_t n = readlinkat(next.get(), "", target, sizeof target);
      if (n < 0) throw fail(at, errno);
      std::filesystem::path to(std::string(target, size_t(n)));
      if (to.is_absolute()) from_root();
      push_path(to);
      continue;
    }
    if (!S_ISDIR(st.st_mode)) throw fail(at, ENOTDIR);
    chain.push_back(std::move(next));
    names.push_back(name);
  }
  if (fstat(chain.back().get(), &st) != 0) throw fail(where(), errno);
  check_private(dir, st);
  Fd folder(openat(chain.back().get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (folder.get() < 0) throw fail(where(), errno);
  return folder;
}

// `name` is `<something>.tmp.<pid>.<salt>.<n>`; stale once its process is gone and it is a minute
// old (a compile in progress is never touched), or a day old whatever its process.
void sweep_temporaries(const std::filesystem::path& dir) {
  std::error_code ec;
  auto now = std::filesystem::file_time_type::clock::now();
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    size_t at = name.find(".tmp.");
    if (at == std::string::npos) continue;
    std::error_code time_ec;
    auto age = now - std::filesystem::last_write_time(it->path(), time_ec);
    if (time_ec) continue;
    long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
    bool gone = pid > 0 && kill(pid_t(pid), 0) != 0 && errno == ESRCH;
    if ((gone && age > std::chrono::minutes(1)) || age > std::chrono::hours(24)) {
      std::error_code rm_ec;
      std::filesystem::remove(it->path(), rm_ec);
    }
  }
}

}  // namespace

std::filesystem::path kernel_cache_dir() {
  std::filesystem::path dir;
  if (const char* d = std::getenv("UOPS_CACHE_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::filesystem::path(x) / "uops";
  } else if (const char* h = std::getenv("HOME"); h && *h) {
    dir = std::filesystem::path(h) / ".cache" / "uops";
  } else {
    throw Error("no kernel cache directory: set UOPS_CACHE_DIR, XDG_CACHE_HOME or HOME");
  }
  open_cache_folder(dir, true);
  static std::mutex mutex;
  static std::set<std::string> swept;
  std::lock_guard<std::mutex> lock(mutex);
  if (swept.insert(dir.string()).second) sweep_temporaries(dir);
  return dir;
}

std::string kernel_cache_key(const std::string& source, const std::string& compiler_identity,
                             const std::string& flags) {
  // Lengths are mixed in so that moving text between the fields changes the key.
  std::string all = std::to_string(source.size()) + ":" + source +
                    std::to_string(compiler_identity.size()) + ":" + compiler_identity +
                    std::to_string(flags.size()) + ":" + flags;
  return hex(fnv1a(all, 14695981039346656037ull)) + hex(fnv1a(all, 0x84222325cbf29ce4ull));
}

std::filesystem::path kernel_cache_path(const std::string& key, const std::string& extension) {
  return kernel_cache_dir() / (key + extension);
}

std::filesystem::path temporary_path_for(const std::filesystem::path& path) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  return path.string() + ".tmp." + std::to_string(getpid()) + "." + hex(salt) + "." +
         std::to_string(counter++);
}

namespace {

// Creates a fresh temporary for `path` in the folder `dir` (relative to it when `dir` is a
// descriptor, AT_FDCWD for a path) and writes `bytes`; returns its name.
std::string write_temporary_at(int dir, const std::filesystem::path& path, const std::string& bytes,
                               mode_t mode) {
  std::filesystem::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = temporary_path_for(path);
    std::string name = dir == AT_FDCWD ? tmp.string() : tmp.filename().string();
    fd = openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && (errno != EEXIST || attempt == 100))
      throw Error("cannot write " + path.string() + ": cannot create " + tmp.string() + ": " +
                  std::strerror(errno));
  }
  std::string name = dir == AT_FDCWD ? tmp.string() : tmp.filename().string();
  size_t done = 0;
  int err = 0;
  while (done < bytes.size() && !err) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) done += size_t(n);
  }
  if (close(fd) != 0 && !err) err = errno;
  if (err) {
    unlinkat(dir, name.c_str(), 0);
    throw Error("cannot write " + tmp.string() + ": " + std::strerror(err));
  }
  return name;
}

// Removes the entry `name` of the folder `dir`, whatever it is: a folder goes with what it
// holds, a few levels deep at most (anything in a cache folder is ours to replace).
bool remove_entry(int dir, const std::string& name, int depth = 0) {
  if (unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT) return true;
  if (errno != EISDIR || depth == 8) return false;
  int fd = openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  DIR* listing = fdopendir(fd);
  if (!listing) {
    close(fd);
    return false;
  }
  std::vector<std::string> inside;
  while (dirent* e = readdir(listing))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      inside.push_back(e->d_name);
  for (auto& n : inside) remove_entry(dirfd(listing), n, depth + 1);
  closedir(listing);
  return unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT;
}

// Renames the temporary `tmp` to `name` in `dir`. In a cache folder (`heal`), a folder in the
// way (left by hand or by another program) is removed and the rename tried again: anything
// there is the cache's to replace. Elsewhere a folder in the way is the user's and stays.
void publish_at(int dir, const std::string& tmp, const std::string& name,
                const std::filesystem::path& path, bool heal) {
  int err = renameat(dir, tmp.c_str(), dir, name.c_str()) == 0 ? 0 : errno;
  if (heal && (err == EISDIR || err == ENOTEMPTY || err == EEXIST)) {
    remove_entry(dir, name);
    err = renameat(dir, tmp.c_str(), dir, name.c_str()) == 0 ? 0 : errno;
  }
  if (err) {
    unlinkat(dir, tmp.c_str(), 0);
    throw Error("cannot write " + path.string() + ": " + std::strerror(err) +
                (heal && (err == EISDIR || err == ENOTEMPTY || err == EEXIST)
                     ? " (a folder is in the way and cannot be removed)"
                     : ""));
  }
}

}  // namespace

std::filesystem::path write_temporary(const std::filesystem::path& path, const std::string& bytes,
                                      mode_t mode) {
  return write_temporary_at(AT_FDCWD, path, bytes, mode);
}

void publish(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  publish_at(AT_FDCWD, temporary.string(), path.string(), path, false);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
  Fd dir = open_cache_folder(path.parent_path(), false);
  std::string name = path.filename().string();
  publish_at(dir.get(), write_temporary_at(dir.get(), path, bytes, 0600), name, path, true);
}

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (!EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr))
    throw Error("SHA-256 failed");
  std::string out;
  for (unsigned i = 0; i < size; ++i) {
    char h[3];
    std::snprintf(h, sizeof h, "%02x", digest[i]);
    out += h;
  }
  return out;
}

namespace {

// The bytes of the entry `name` of `dir` when it is a regular file of the caller's that no one
// else may write. Opened once, without following a link or waiting on a FIFO; checked and read
// through that one descriptor.
std::optional<std::string> read_trusted(int dir, const std::string& name) {
  Fd fd(openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return std::nullopt;
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)))
    return std::nullopt;
  std::string bytes;
  for (;;) {
    char buf[65536];
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return bytes;
    bytes.append(buf, size_t(n));
  }
}

std::string digest_name(const std::filesystem::path& path) {
  return path.filename().string() + ".sha256";
}

}  // namespace

std::optional<std::string> read_cache_file(const std::filesystem::path& path) {
  Fd dir = open_cache_folder(path.parent_path(), false);
  return read_trusted(dir.get(), path.filename().string());
}

void store_artifact(const std::filesystem::path& path, const std::string& bytes) {
  Fd dir = open_cache_folder(path.parent_path(), false);
  std::filesystem::path digest = path.string() + ".sha256";
  publish_at(dir.get(), write_temporary_at(dir.get(), digest, sha256_hex(bytes) + "\n", 0600),
             digest_name(path), digest, true);
  publish_at(dir.get(), write_temporary_at(dir.get(), path, bytes, 0600), path.filename().string(),
             path, true);
}

void remove_artifact(const std::filesystem::path& path) {
  Fd dir = open_cache_folder(path.parent_path(), false);
  remove_entry(dir.get(), path.filename().string());
  remove_entry(dir.get(), digest_name(path));
}

std::optional<std::string> read_artifact(const std::filesystem::path& path) {
  Fd dir = open_cache_folder(path.parent_path(), false);
  std::string name = path.filename().string(), digest_file = digest_name(path);
  struct stat st {};
  if (fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
    return std::nullopt;
  auto bytes = read_trusted(dir.get(), name);
  auto digest = read_trusted(dir.get(), digest_file);
  if (bytes && digest && *digest == sha256_hex(*bytes) + "\n") return bytes;
  remove_entry(dir.get(), name);
  remove_entry(dir.get(), digest_file);
  return std::nullopt;
}

}  // namespace uops
