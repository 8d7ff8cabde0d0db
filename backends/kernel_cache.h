// The kernel cache the C and CUDA backends share (docs/design.md §3.7). An artifact (a shared
// object, PTX) is keyed by a hash of its source, the compiler's identity and the flags, and lives
// in
//   $UOPS_CACHE_DIR, else $XDG_CACHE_HOME/uops, else $HOME/.cache/uops.
// Files are written under a temporary name and renamed into place, so a concurrent process sees
// either no file or a whole one. A hit costs no compiler call.
//
// Trust: what is loaded from the cache runs as the caller, so no other user may be able to change
// it (docs/design.md, "Kernel cache"). The folder is created 0700 and must be the caller's and
// writable by no one else; every folder above it must belong to root or the caller and be
// writable by no one else unless sticky (as /tmp), and a symbolic link on the path must belong to
// root or the caller: otherwise another user could rename a parent and put a tree of theirs in
// its place. The path is walked from "/" one name at a time through descriptors, each checked as
// it is opened, and files are opened relative to the folder found: what is checked is what is
// used. A path that fails is refused with an Error saying how to fix it (no silent fallback: a
// second, private cache elsewhere would hide the misconfiguration and recompile every kernel).
// An artifact is stored beside the SHA-256 of its bytes (`<name>.sha256`) and read through one
// descriptor opened with O_NOFOLLOW | O_NONBLOCK (a planted link is not followed, a FIFO does
// not block); anything that is not a regular file of the current user writable by no one else,
// or whose bytes do not match the digest, is deleted (a folder with what it holds) and treated as
// a miss, so it is rebuilt, never loaded. Temporaries are created exclusively; those of dead
// processes are swept on first use.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

namespace uops {

// Created on first use; throws when it or a folder above it fails the trust rules.
std::filesystem::path kernel_cache_dir();
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

// The functions below take a path in a cache folder and apply the trust rules to that folder.
// Writes `bytes` to a temporary and renames it to `path`, replacing a folder in the way.
void write_file_atomically(const std::filesystem::path& path, const std::string& bytes);
// The bytes of `path` when it is a regular file of the current user that no one else may write.
std::optional<std::string> read_cache_file(const std::filesystem::path& path);

// The digest, then the artifact, each written atomically.
void store_artifact(const std::filesystem::path& path, const std::string& bytes);
// The bytes of the artifact at `path` when it is trusted and matches its digest; otherwise the
// file and its digest are deleted and the result is empty.
std::optional<std::string> read_artifact(const std::filesystem::path& path);
void remove_artifact(const std::filesystem::path& path);

std::string sha256_hex(const std::string& bytes);

}  // namespace uops
