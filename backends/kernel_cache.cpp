#include "backends/kernel_cache.h"

#include <fcntl.h>
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

// The folder must be the caller's and writable by no one else: what is loaded from it runs.
void check_private(const std::filesystem::path& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0)
    throw Error("cannot use the kernel cache directory " + dir.string() + ": " +
                std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) throw Error("the kernel cache path " + dir.string() + " is no folder");
  if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    throw Error("the kernel cache directory " + dir.string() +
                (st.st_uid != geteuid()
                     ? " belongs to another user (uid " + std::to_string(st.st_uid) + ")"
                     : std::string(" is writable by group or others (mode ") + mode + ")") +
                ": a kernel planted there would run as you. Use a private folder (chmod 700, or "
                "set UOPS_CACHE_DIR to a folder of your own)");
  }
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
  std::error_code ec;
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
  if (ec || (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST))
    throw Error("cannot create the kernel cache directory " + dir.string() + ": " +
                (ec ? ec.message() : std::strerror(errno)));
  check_private(dir);
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

std::filesystem::path write_temporary(const std::filesystem::path& path, const std::string& bytes,
                                      mode_t mode) {
  std::filesystem::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = temporary_path_for(path);
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && (errno != EEXIST || attempt == 100))
      throw Error("cannot write " + path.string() + ": cannot create " + tmp.string() + ": " +
                  std::strerror(errno));
  }
  size_t done = 0;
  int err = 0;
  while (done < bytes.size() && !err) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) done += size_t(n);
  }
  if (close(fd) != 0 && !err) err = errno;
  if (err) {
    unlink(tmp.c_str());
    throw Error("cannot write " + tmp.string() + ": " + std::strerror(err));
  }
  return tmp;
}

void publish(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(temporary.c_str());
    throw Error("cannot write " + path.string() + ": " + std::strerror(err));
  }
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
  publish(write_temporary(path, bytes), path);
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

std::filesystem::path digest_path(const std::filesystem::path& path) {
  return path.string() + ".sha256";
}

// The bytes of a regular file of the caller's that no one else may write, read through a
// descriptor that did not follow a link.
std::optional<std::string> read_trusted(const std::filesystem::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string bytes;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            !(st.st_mode & (S_IWGRP | S_IWOTH));
  while (ok) {
    char buf[65536];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    bytes.append(buf, size_t(n));
  }
  close(fd);
  if (!ok) return std::nullopt;
  return bytes;
}

}  // namespace

void store_artifact(const std::filesystem::path& path, const std::string& bytes) {
  write_file_atomically(digest_path(path), sha256_hex(bytes) + "\n");
  write_file_atomically(path, bytes);
}

void remove_artifact(const std::filesystem::path& path) {
  unlink(path.c_str());
  unlink(digest_path(path).c_str());
}

std::optional<std::string> read_artifact(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return std::nullopt;
  auto bytes = read_trusted(path);
  auto digest = read_trusted(digest_path(path));
  if (bytes && digest && *digest == sha256_hex(*bytes) + "\n") return bytes;
  remove_artifact(path);
  return std::nullopt;
}

}  // namespace uops
