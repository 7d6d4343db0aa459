// exercises/06-metrics-format/learners: announces a family again each time its samples resume
// after another's (chapter 06; a learner's answer the tests must fail).
#include "exposition.h"

#include <cstdio>

namespace exercise {

std::string exposition(const std::vector<Sample>& samples) {
  std::string out;
  std::string last;  // the family of the line above
  for (const Sample& s : samples) {
    const std::string name = s.type == "counter" ? s.family + "_total" : s.family;
    if (s.family != last) {
      out += "# HELP " + name + " " + s.help + "\n# TYPE " + name + " " + s.type + "\n";
      last = s.family;
    }
    std::string labels;
    for (const auto& [k, v] : s.labels) {
      std::string escaped;
      for (char c : v) {
        if (c == '\\' || c == '"') escaped += '\\';
        escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
      }
      labels += (labels.empty() ? "" : ",") + k + "=\"" + escaped + "\"";
    }
    char value[32];
    std::snprintf(value, sizeof value, "%.17g", s.value);
    out += name + "{" + labels + "} " + value + "\n";
  }
  return out;
}

}  // namespace exercise
