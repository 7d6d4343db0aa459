// exercises/06-metrics-format/learners: prints each value with std::to_string (six decimals)
// (chapter 06; a learner's answer the tests must fail).
#include "exposition.h"

#include <cstdio>
#include <map>

namespace exercise {

namespace {

std::string escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string number(double v) { return std::to_string(v); }

}  // namespace

std::string exposition(const std::vector<Sample>& samples) {
  std::vector<std::string> families;           // in the order they first came
  std::map<std::string, std::string> body;     // family -> its sample lines
  std::map<std::string, const Sample*> first;  // family -> its first sample, for HELP and TYPE
  for (const Sample& s : samples) {
    const std::string name = s.type == "counter" ? s.family + "_total" : s.family;
    if (first.count(s.family) == 0) {
      families.push_back(s.family);
      first[s.family] = &s;
    }
    std::string line = name + "{";
    for (std::size_t i = 0; i < s.labels.size(); ++i) {
      if (i > 0) line += ",";
      line += s.labels[i].first + "=\"" + escape(s.labels[i].second) + "\"";
    }
    line += "} " + number(s.value);
    body[s.family] += line + "\n";
  }
  std::string out;
  for (const auto& f : families) {
    const Sample& s = *first[f];
    const std::string name = s.type == "counter" ? f + "_total" : f;
    out += "# HELP " + name + " " + s.help + "\n";
    out += "# TYPE " + name + " " + s.type + "\n";
    out += body[f];
  }
  return out;
}

}  // namespace exercise
