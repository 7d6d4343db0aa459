// exercises/06-metrics-format: the part of /metrics this exercise asks for (chapter 06).
// Given: the samples a server's threads report, in the order they are read (thread by
// thread, so one family's samples arrive interleaved with the others'). Write exposition().
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace exercise {

/// One figure of one thread: `family` is the metric's name without any suffix
/// ("handoff_requests"), `type` is "counter" or "gauge", `labels` are name/value pairs in
/// the order they are printed.
struct Sample {
  std::string family;
  std::string type;
  std::string help;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

/// The samples in Prometheus's text exposition format, version 0.0.4: every family once,
/// in the order its first sample came, as `# HELP`, `# TYPE` and then all its samples; a
/// counter's name ends in `_total` (on its HELP and TYPE lines as on its samples); label
/// values escaped as the format requires.
std::string exposition(const std::vector<Sample>& samples);

}  // namespace exercise
