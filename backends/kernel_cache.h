// The kernel cache the C and CUDA backends share (docs/design.md §3.7). An artifact (a shared
// object, PTX) is keyed by a hash of its source, the compiler's identity and the flags, and lives
// in
//   $UOPS_CACHE_DIR, else $XDG_CACHE_HOME/uops, else $HOME/.cache/uops.
// Files are written under a temporary name and renamed into place, so a concurrent process sees
// either no file or a whole one. A hit costs no compiler call.
//
// Trust: what is loaded from the cache runs as the caller, so the folder must be private. It is
// created 0700; a folder owned by another user or writable by group or others is refused with
// an Error saying how to fix it (no silent fallback: a second, private cache elsewhere would hide
// the misconfiguration and recompile every kernel). An artifact is stored beside the SHA-256 of
// its bytes (`<name>.sha256`) and read through a descriptor opened with O_NOFOLLOW; one that is
// not a regular file of the current user writable by no one else, or whose bytes do not match
// the digest, is deleted and treated as a miss, so a corrupt or planted file is rebuilt, never
// loaded. Temporaries are created exclusively; those of dead processes are swept on first use.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace uops {

std::filesystem::path kernel_cache_dir();  // created on first use; throws when not private
// 32 hex digits.
std::string kernel_cache_key(const std::string& source, const std::string& compiler_identity,
                             const std::string& flags);
std::filesystem::path kernel_cache_path(const std::string& key, const std::string& extension);

// A fresh name in the same directory as `path`, unique across threads and processes, for a
// tool that writes the file itself (a compiler's -o) before `publish` renames it into place.
std::filesystem::path temporary_path_for(const std::filesystem::path& path);
// Writes `bytes` to a new file beside `path`, created exclusively (O_CREAT | O_EXCL |
// O_NOFOLLOW: a file or link already at the name is never followed or reused) with `mode`
// less the umask, and returns its name. On failure the file is removed and the Error names the
// reason (no space, permission denied).
std::filesystem::path write_temporary(const std::filesystem::path& path, const std::string& bytes,
                                      mode_t mode = 0600);
// Renames `temporary` to `path`; on failure removes the temporary and throws.
void publish(const std::filesystem::path& temporary, const std::filesystem::path& path);
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);

// The digest, then the artifact, each written atomically.
void store_artifact(const std::filesystem::path& path, const std::string& bytes);
// The bytes of the artifact at `path` when it is trusted and matches its digest; otherwise the
// file and its digest are deleted and the result is empty.
std::optional<std::string> read_artifact(const std::filesystem::path& path);
void remove_artifact(const std::filesystem::path& path);

std::string sha256_hex(const std::string& bytes);

}  // namespace uops
