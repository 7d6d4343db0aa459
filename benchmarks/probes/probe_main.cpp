// probes/probe_main: what every probe's main does around its measurement (chapter 01).
#include "probe_main.h"

namespace handoff::probes {

ProbeMain::ProbeMain(const char* tool, const std::string& description) : tool_(tool), cli_(description) {}

config::Option* ProbeMain::add_report_flags(const std::string& checks) {
  cli_.add_option("--json", json_path_, "Write the JSON report to this file (default: stdout)");
  return cli_
      .add_option("--check", check_path_,
                  "Instead of measuring, check FILE (written by this tool): " + checks + "; exit 1 if not")
      ->excludes("--json");
}

std::optional<int> ProbeMain::parse(
    int argc, char** argv, bool with_settings, const std::string& passed,
    const std::function<void(const Json& doc, std::vector<std::string>& problems)>& judge) {
  if (const auto status = cli_.parse(argc, argv)) return status;
  if (!check_path_.empty()) return check_report(check_path_, tool_, with_settings, passed, judge);
  return std::nullopt;
}

int ProbeMain::report(const Json& fields, const std::function<void(const Json&)>& print_table) const {
  Json doc{{"tool", tool_}, {"machine", machine()}};
  for (const auto& [key, value] : fields.items()) doc[key] = value;
  return emit_report(doc, json_path_, tool_, print_table);
}

void alternate_arms(unsigned rounds, std::size_t arms, const std::function<void(unsigned round, std::size_t k)>& arm) {
  for (unsigned round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < arms; ++i) arm(round, round % 2 == 0 ? i : arms - 1 - i);
  }
}

}  // namespace handoff::probes
