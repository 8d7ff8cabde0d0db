#include "uops/oracle/failure_db.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "backends/kernel_cache.h"
#include "uops/error.h"

namespace uops::oracle {

namespace {

const char kHeader[] = "uops-oracle-failure 1";

// A name as a file name part: letters, digits, '_' and '-' kept, anything else '_' (the true
// names are inside the file and checked when it is read back).
std::string file_part(const std::string& name) {
  std::string out;
  for (char ch : name) out += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' ? ch : '_';
  return out.empty() ? "_" : out;
}

std::string hex64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: a name, not a digest to trust
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void check_private(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 && errno == ENOENT) {
    std::error_code ec;
    std::filesystem::create_directories(dir.parent_path().empty() ? "." : dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      throw Error("oracle failure database " + dir.string() +
                  ": cannot create it: " + std::strerror(errno));
  }
  if (::lstat(dir.c_str(), &st) != 0)
    throw Error("oracle failure database " + dir.string() + ": " + std::strerror(errno));
  if (S_ISLNK(st.st_mode))
    throw Error("oracle failure database " + dir.string() +
                " is a symbolic link: give the folder itself");
  if (!S_ISDIR(st.st_mode))
    throw Error("oracle failure database " + dir.string() + " is not a folder");
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    throw Error("oracle failure database " + dir.string() +
                (st.st_uid != ::geteuid()
                     ? " belongs to another user (uid " + std::to_string(st.st_uid) + ")"
                     : std::string(" is writable by group or others (mode ") + mode + ")") +
                ": cases planted there would steer your checks. Use a private folder (chmod 700)");
  }
}

// The file's bytes when it is a regular file of ours that no one else can write, at most
// `limit` bytes long; otherwise why not.
std::string read_trusted(const std::filesystem::path& path, size_t limit, std::string* why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = std::strerror(errno);
    return "";
  }
  struct stat st {};
  std::string bytes;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = "not a regular file";
  } else if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    *why = "another user's, or writable by group or others";
  } else if (size_t(st.st_size) > limit) {
    *why = std::to_string(st.st_size) + " bytes, past the limit of " + std::to_string(limit);
  } else {
    bytes.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < bytes.size()) {
      ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += size_t(n);
    }
    bytes.resize(got);
  }
  ::close(fd);
  return bytes;
}

}  // namespace

FailureDb::FailureDb(std::filesystem::path dir, const OpDef& op, std::string implementation)
    : dir_(std::move(dir)), op_(&op), implementation_(std::move(implementation)) {
  if (implementation_.empty()) implementation_ = "implementation";
  check_private(dir_);
}

std::filesystem::path FailureDb::file_for(const Case& c) const {
  return dir_ / (file_part(op_->name) + "." + file_part(implementation_) + "." +
                 hex64(op_->name + '\n' + implementation_ + '\n' + case_text(c)) + ".case");
}

void FailureDb::store(const Case& c, int passes) const {
  std::ostringstream os;
  os << kHeader << "\nop " << op_->name << "\nimplementation " << implementation_ << "\npasses "
     << passes << "\ncase " << case_text(c) << "\n";
  write_file_atomically(file_for(c), os.str());
}

std::vector<FailureDb::Entry> FailureDb::load(DType dtype,
                                              std::vector<std::string>& warnings) const {
  std::string prefix = file_part(op_->name) + "." + file_part(implementation_) + ".";
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir_, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > 5 && name.ends_with(".case"))
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Entry> entries;
  for (const auto& file : files) {
    if (entries.size() == kMaxEntries) {
      warnings.push_back("failure database: more than " + std::to_string(kMaxEntries) +
                         " cases stored for " + op_->name + " on " + implementation_ +
                         "; the rest are not replayed");
      break;
    }
    std::string why;
    std::string bytes = read_trusted(file, kMaxEntryBytes, &why);
    std::istringstream is(bytes);
    std::string header, op_line, impl_line, passes_line, case_line;
    std::getline(is, header);
    std::getline(is, op_line);
    std::getline(is, impl_line);
    std::getline(is, passes_line);
    std::getline(is, case_line);
    if (why.empty() && (header != kHeader || op_line.rfind("op ", 0) != 0 ||
                        impl_line.rfind("implementation ", 0) != 0 ||
                        passes_line.rfind("passes ", 0) != 0 || case_line.rfind("case ", 0) != 0))
      why = "not a failure database entry";
    // A name whose file part collides with ours: another op's entry, not a corrupt one.
    if (why.empty() && (op_line.substr(3) != op_->name || impl_line.substr(15) != implementation_))
      continue;
    Entry e;
    e.file = file;
    if (why.empty()) {
      try {
        e.passes = std::stoi(passes_line.substr(7));
        e.c = parse_case(*op_, case_line.substr(5));
      } catch (const std::exception& ex) {
        why = ex.what();
      }
    }
    if (!why.empty()) {
      warnings.push_back("failure database: skipped " + file.string() + ": " + why);
      continue;
    }
    if (e.c.dtype == dtype) entries.push_back(std::move(e));
  }
  return entries;
}

void FailureDb::record_failure(const Case& c) const {
  store(c, 0);
}

void FailureDb::record_pass(const Entry& e) const {
  if (e.passes + 1 >= kForgetAfterPasses) {
    std::error_code ec;
    std::filesystem::remove(e.file, ec);
  } else {
    store(e.c, e.passes + 1);
  }
}

}  // namespace uops::oracle
