// exercises/06-metrics-format/starter: prints every sample, and is wrong. Fix it.
#include "exposition.h"

#include <cstdio>

namespace exercise {

std::string exposition(const std::vector<Sample>& samples) {
  std::string out;
  for (const Sample& s : samples) {
    out += "# HELP " + s.family + " " + s.help + "\n# TYPE " + s.family + " " + s.type + "\n";
    std::string labels;
    for (const auto& [name, value] : s.labels) labels += (labels.empty() ? "" : ",") + name + "=\"" + value + "\"";
    char value[64];
    std::snprintf(value, sizeof value, "%g", s.value);
    out += s.family + "{" + labels + "} " + value + "\n";
  }
  return out;
}

}  // namespace exercise
