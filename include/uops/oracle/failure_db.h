// The oracle's failure memory, as Hypothesis's example database: a folder where each failing
// check stores its shrunk case, per op and implementation name, so that the next check of that
// implementation replays it before any random case. A stored case that passes stays until it has
// passed kForgetAfterPasses times (a fix that holds), and a new failure of it starts the count
// again.
//
// Trust: the folder is the caller's (created 0700; one that is a symlink, another user's, or
// writable by group or others is refused with a uops::Error, as the kernel cache's is). Each case
// is one small text file written atomically (a temporary renamed into place), read back through
// a descriptor opened with O_NOFOLLOW, at most kMaxEntryBytes of it; an entry that is not a
// regular file of ours, is too long, or does not parse as a case is skipped with a warning, never
// an error: a corrupt memory must not stop a test suite.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ops/registry.h"
#include "uops/oracle/generator.h"

namespace uops::oracle {

class FailureDb {
 public:
  static constexpr int kForgetAfterPasses = 3;
  static constexpr size_t kMaxEntryBytes = 64 * 1024;
  static constexpr size_t kMaxEntries = 100;  // replayed per op and implementation

  struct Entry {
    Case c;
    int passes = 0;
    std::filesystem::path file;
  };

  // Creates the folder when missing; throws uops::Error when it cannot be trusted.
  FailureDb(std::filesystem::path dir, const OpDef& op, std::string implementation);

  // The stored cases of this op, implementation and dtype, oldest first; what had to be skipped
  // is appended to `warnings`.
  std::vector<Entry> load(DType dtype, std::vector<std::string>& warnings) const;
  void record_failure(const Case& c) const;
  // One more pass of a stored case; at kForgetAfterPasses it is removed.
  void record_pass(const Entry& e) const;

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path file_for(const Case& c) const;
  void store(const Case& c, int passes) const;

  std::filesystem::path dir_;
  const OpDef* op_;
  std::string implementation_;
};

}  // namespace uops::oracle
