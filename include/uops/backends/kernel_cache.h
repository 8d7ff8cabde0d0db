// The kernel cache the C and CUDA backends share (DESIGN.md 3.7). An artifact (a shared object,
// PTX) is keyed by a hash of its source, the compiler's identity and the flags, and lives in
//   $UOPS_CACHE_DIR, else $XDG_CACHE_HOME/uops, else $HOME/.cache/uops.
// Files are written under a temporary name and renamed into place, so a concurrent process sees
// either no file or a whole one. A hit costs no compiler call.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace uops {

std::filesystem::path kernel_cache_dir();  // created on first use
// 32 hex digits.
std::string kernel_cache_key(const std::string& source, const std::string& compiler_identity,
                             const std::string& flags);
std::filesystem::path kernel_cache_path(const std::string& key, const std::string& extension);

// A fresh name in the same directory as `path`, unique across threads and processes, for a
// tool that writes the file itself before `publish` renames it into place.
std::filesystem::path temporary_path_for(const std::filesystem::path& path);
void publish(const std::filesystem::path& temporary, const std::filesystem::path& path);
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace uops
