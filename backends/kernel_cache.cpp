#include "uops/backends/kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

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
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create the kernel cache directory " + dir.string() + ": " + ec.message());
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

void publish(const std::filesystem::path& temporary, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw Error("cannot write " + path.string() + ": " + ec.message());
  }
}

void write_file_atomically(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::path tmp = temporary_path_for(path);
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out) throw Error("cannot write " + tmp.string());
  }
  publish(tmp, path);
}

std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace uops
