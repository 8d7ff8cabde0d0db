#include "reports.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "backends/kernel_cache.h"
#include "uops/error.h"

namespace uops::tools {

using nlohmann::json;

namespace {

constexpr int kVersion = 1;
constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t(64) << 20;

// JSON has no infinity: an error that is not finite (the implementation threw) is null, and
// null is the largest error when merging.
json error_value(double e) {
  return std::isfinite(e) ? json(e) : json(nullptr);
}

double error_of(const json& v) {
  return v.is_null() ? std::numeric_limits<double>::infinity() : v.get<double>();
}

std::string case_line(const oracle::Case& c) {
  return oracle::shapes_text(c.shapes) + (c.params.empty() ? "" : " ") +
         oracle::params_text(c.params);
}

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (unsigned char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no other control characters.
        if (ch < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += '?';
        } else {
          out += char(ch);
        }
    }
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

json reports_json(const Campaign& campaign, const std::vector<oracle::CheckReport>& reports) {
  json doc = {{"uopc_check_reports", kVersion},
              {"seed", campaign.seed},
              {"trials", campaign.trials},
              {"shards", campaign.shards},
              {"shard_indexes", json::array({campaign.shard})},
              {"checks", json::array()}};
  for (const oracle::CheckReport& r : reports) {
    json check = {{"op", r.op},
                  {"backend", r.backend},
                  {"dtype", dtype_name(r.dtype)},
                  {"cases", r.cases},
                  {"skipped", r.skipped},
                  {"replayed", r.replayed},
                  {"passed", r.passed},
                  {"worst_error", error_value(r.worst_error)},
                  {"reference_error", r.has_reference ? error_value(r.reference_error) : json()},
                  {"has_reference", r.has_reference},
                  {"seconds", r.seconds},
                  {"notes", r.notes},
                  {"failures", json::array()}};
    if (!r.passed)
      check["failures"].push_back({{"shard", campaign.shard},
                                   {"culprit", r.culprit},
                                   {"seed", r.original.seed},
                                   {"case", case_line(r.original)},
                                   {"shrunk", case_line(r.shrunk)},
                                   {"replay", r.replay},
                                   {"reproduce", r.repro},
                                   {"message", r.message()}});
    doc["checks"].push_back(std::move(check));
  }
  return doc;
}

std::string junit_xml(const json& doc) {
  int failures = 0;
  double seconds = 0;
  std::ostringstream cases;
  for (const json& c : doc.at("checks")) {
    std::string name = c.at("op").get<std::string>() + " " + c.at("backend").get<std::string>() +
                       " " + c.at("dtype").get<std::string>();
    seconds += c.at("seconds").get<double>();
    cases << "    <testcase classname=\"uopc.check." << xml_escaped(c.at("op").get<std::string>())
          << "\" name=\"" << xml_escaped(name) << "\" time=\"" << number(c.at("seconds"))
          << "\">\n";
    if (!c.at("passed").get<bool>()) {
      ++failures;
      std::string text;
      for (const json& f : c.at("failures")) text += f.at("message").get<std::string>();
      std::string first =
          c.at("failures").empty()
              ? std::string("failed")
              : c.at("failures")[0].at("culprit").get<std::string>() +
                    " disagrees; replay: " + c.at("failures")[0].at("replay").get<std::string>();
      cases << "      <failure message=\"" << xml_escaped(first) << "\">" << xml_escaped(text)
            << "</failure>\n";
    }
    std::string out = std::to_string(c.at("cases").get<int>()) + " cases, " +
                      std::to_string(c.at("skipped").get<int>()) + " skipped\n";
    for (const json& n : c.at("notes")) out += "note: " + n.get<std::string>() + "\n";
    cases << "      <system-out>" << xml_escaped(out) << "</system-out>\n";
    cases << "    </testcase>\n";
  }
  std::ostringstream os;
  size_t n = doc.at("checks").size();
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<testsuites tests=\"" << n << "\" failures=\"" << failures << "\" time=\""
     << number(seconds) << "\">\n"
     << "  <testsuite name=\"uopc check\" tests=\"" << n << "\" failures=\"" << failures
     << "\" errors=\"0\" skipped=\"0\" time=\"" << number(seconds) << "\">\n"
     << cases.str() << "  </testsuite>\n</testsuites>\n";
  return os.str();
}

json merge_reports(const std::vector<json>& shards) {
  if (shards.empty()) throw Error("merge-reports: no report given");
  const json& head = shards.front();
  json merged = head;
  merged["checks"] = json::array();
  std::set<int> seen;
  std::map<std::string, size_t> index;  // "op backend dtype" -> position in merged["checks"]
  for (const json& doc : shards) {
    for (const char* key : {"seed", "trials", "shards"})
      if (doc.at(key) != head.at(key))
        throw Error(std::string("merge-reports: the reports are not of one campaign: ") + key +
                    " " + doc.at(key).dump() + " and " + head.at(key).dump());
    for (const json& k : doc.at("shard_indexes"))
      if (!seen.insert(k.get<int>()).second)
        throw Error("merge-reports: shard " + k.dump() + " is given twice");
    for (const json& c : doc.at("checks")) {
      std::string key = c.at("op").get<std::string>() + " " + c.at("backend").get<std::string>() +
                        " " + c.at("dtype").get<std::string>();
      auto [it, fresh] = index.emplace(key, merged["checks"].size());
      if (fresh) {
        merged["checks"].push_back(c);
        continue;
      }
      json& m = merged["checks"][it->second];
      for (const char* sum : {"cases", "skipped", "replayed"})
        m[sum] = m.at(sum).get<int>() + c.at(sum).get<int>();
      m["seconds"] = m.at("seconds").get<double>() + c.at("seconds").get<double>();
      m["passed"] = m.at("passed").get<bool>() && c.at("passed").get<bool>();
      m["worst_error"] =
          error_value(std::max(error_of(m.at("worst_error")), error_of(c.at("worst_error"))));
      if (m.at("has_reference").get<bool>())
        m["reference_error"] = error_value(
            std::max(error_of(m.at("reference_error")), error_of(c.at("reference_error"))));
      for (const json& n : c.at("notes")) m["notes"].push_back(n);
      for (const json& f : c.at("failures")) m["failures"].push_back(f);
    }
  }
  int total = head.at("shards").get<int>();
  for (int k = 0; k < total; ++k)
    if (!seen.count(k))
      throw Error("merge-reports: shard " + std::to_string(k) + " of " + std::to_string(total) +
                  " is missing");
  merged["shard_indexes"] = json(std::vector<int>(seen.begin(), seen.end()));
  return merged;
}

json read_reports(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(path + ": not a reports file (no such regular file)");
  if (std::filesystem::file_size(path, ec) > kMaxReportBytes)
    throw Error(path + ": larger than 64 MiB, not a reports file");
  std::ifstream in(path, std::ios::binary);
  json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("uopc_check_reports"))
    throw Error(path + ": not a `uopc check --json` reports file");
  if (doc.at("uopc_check_reports") != kVersion)
    throw Error(path + ": reports version " + doc.at("uopc_check_reports").dump() +
                ", this uopc reads " + std::to_string(kVersion));
  // Every field the merge and the summary read, with its type, so that they can trust them.
  try {
    doc.at("seed").get<uint64_t>();
    doc.at("trials").get<int>();
    doc.at("shards").get<int>();
    for (const json& k : doc.at("shard_indexes")) k.get<int>();
    for (const json& c : doc.at("checks")) {
      for (const char* key : {"op", "backend", "dtype"}) c.at(key).get<std::string>();
      for (const char* key : {"cases", "skipped", "replayed"}) c.at(key).get<int>();
      for (const char* key : {"passed", "has_reference"}) c.at(key).get<bool>();
      c.at("seconds").get<double>();
      error_of(c.at("worst_error"));
      if (c.at("has_reference").get<bool>()) error_of(c.at("reference_error"));
      for (const json& n : c.at("notes")) n.get<std::string>();
      for (const json& f : c.at("failures"))
        for (const char* key : {"culprit", "replay", "message"}) f.at(key).get<std::string>();
    }
  } catch (const json::exception& e) {
    throw Error(path + ": malformed reports file: " + e.what());
  }
  return doc;
}

void write_atomically(const std::string& path, const std::string& bytes) {
  publish(write_temporary(path, bytes, 0666), path);
}

int print_summary(const json& doc) {
  int failures = 0;
  double total_seconds = 0;
  std::printf("%-18s %-7s %-5s %6s %12s %12s %9s  %s\n", "op", "backend", "dtype", "cases",
              "worst error", "uops/eigen", "time", "result");
  for (const json& c : doc.at("checks")) {
    bool passed = c.at("passed").get<bool>();
    failures += !passed;
    total_seconds += c.at("seconds").get<double>();
    char reference[32] = "-";  // a user's op has no Eigen reference
    if (c.at("has_reference").get<bool>())
      std::snprintf(reference, sizeof reference, "%.3g", error_of(c.at("reference_error")));
    std::printf("%-18s %-7s %-5s %6d %12.3g %12s %8.3fs  %s\n",
                c.at("op").get<std::string>().c_str(), c.at("backend").get<std::string>().c_str(),
                c.at("dtype").get<std::string>().c_str(), c.at("cases").get<int>(),
                error_of(c.at("worst_error")), reference, c.at("seconds").get<double>(),
                passed ? "pass" : "FAIL");
  }
  std::printf("%zu checks, %d failed, %.2fs (errors are in units of the tolerance)\n",
              doc.at("checks").size(), failures, total_seconds);
  for (const json& c : doc.at("checks")) {
    for (const json& f : c.at("failures"))
      std::printf("\n%s", f.at("message").get<std::string>().c_str());
    if (c.at("passed").get<bool>())
      for (const json& n : c.at("notes")) std::printf("note: %s\n", n.get<std::string>().c_str());
  }
  return failures;
}

}  // namespace uops::tools
