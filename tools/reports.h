// The files `uopc check --json/--junit` writes and `uopc merge-reports` reads (docs/design.md §4):
// one JSON document per run (its campaign: seed, trials, shard; then one entry per check), from
// which the JUnit XML a CI dashboard reads is derived, and which the shards of a campaign merge
// into one. Files are written under a temporary name and renamed into place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "uops/oracle/harness.h"

namespace uops::tools {

struct Campaign {
  uint64_t seed = 1;
  int trials = 0;
  int shard = 0, shards = 1;
};

nlohmann::json reports_json(const Campaign& campaign,
                            const std::vector<oracle::CheckReport>& reports);
// Testsuites of one testsuite ("uopc check"), a testcase per check; a failing one holds the
// report's message.
std::string junit_xml(const nlohmann::json& doc);
// The union of the shards of one campaign: each check's cases and times summed, its worst errors
// the largest, its failures all kept. Throws uops::Error when the files are not shards of one
// campaign (another seed, trial count or shard count, a shard given twice or missing).
nlohmann::json merge_reports(const std::vector<nlohmann::json>& shards);

// Reads a reports file (at most 64 MiB); throws uops::Error when it is not one.
nlohmann::json read_reports(const std::string& path);
void write_atomically(const std::string& path, const std::string& bytes);

// The table `uopc check` prints, for a document; returns how many checks failed.
int print_summary(const nlohmann::json& doc);

}  // namespace uops::tools
