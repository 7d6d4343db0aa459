// probes/probe_main: what every probe's main does around its measurement (chapter 01; one
// home since issue 26).
// Role: the command line with the report's two flags, --json FILE and --check FILE (judge a
// file instead of measuring; it excludes --json), the report itself ({"tool", "machine",
// then the probe's own fields}, printed whole or written and summed up), and the order of
// the arms over rounds. A probe adds its own flags, measures, and judges; nothing else.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/command_line.h"
#include "probe_report.h"

namespace handoff::probes {

class ProbeMain {
 public:
  /// `tool`: the report's "tool" and the prefix of every message ("gil-spin"); `description`:
  /// the line under --help.
  ProbeMain(const char* tool, const std::string& description);

  config::CommandLine& cli() noexcept { return cli_; }
  /// Whether --json names a file: the report is then summed up on stdout, and a probe may
  /// say its progress on stderr without mixing it into a report printed whole.
  bool writes_file() const noexcept { return !json_path_.empty(); }

  /// Add --json and --check, the latter described as "Instead of measuring, check FILE
  /// (written by this tool): `checks`; exit 1 if not". Returns --check's handle, so that a
  /// probe can make it exclude its own flags too (`->excludes("--only")`).
  config::Option* add_report_flags(const std::string& checks);

  /// Parse the command line. nullopt: measure. Otherwise the status to exit with: the
  /// parser's (after --help or a refused flag), or the verdict on --check's FILE, judged by
  /// check_report with `with_settings`, `passed` and the probe's own `judge`.
  std::optional<int> parse(int argc, char** argv, bool with_settings, const std::string& passed,
                           const std::function<void(const Json& doc, std::vector<std::string>& problems)>& judge);

  /// The report: {"tool", "machine", then `fields` in their order}, printed whole on stdout
  /// without --json, else written there and summed up by `print_table`. The exit status.
  int report(const Json& fields, const std::function<void(const Json&)>& print_table) const;

 private:
  const char* tool_;
  config::CommandLine cli_;
  std::string json_path_;
  std::string check_path_;
};

/// Call `arm(round, k)` for each of `rounds` rounds and each of `arms` arms: in order in even
/// rounds, reversed in odd ones, so that no arm always runs first (or last) on a machine that
/// warms up or throttles as a round goes on.
void alternate_arms(unsigned rounds, std::size_t arms, const std::function<void(unsigned round, std::size_t k)>& arm);

}  // namespace handoff::probes
