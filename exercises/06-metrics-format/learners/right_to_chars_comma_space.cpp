// exercises/06-metrics-format/learners: families found by a linear search, labels joined with
// ", ", values by std::to_chars (the shortest text that reads back exactly) (chapter 06; a
// learner's answer the tests must pass).
#include "exposition.h"

#include <charconv>

namespace exercise {

namespace {

struct Family {
  std::string name;
  std::string head;
  std::string lines;
};

}  // namespace

std::string exposition(const std::vector<Sample>& samples) {
  std::vector<Family> families;
  for (const Sample& s : samples) {
    const std::string name = s.family + (s.type == "counter" ? "_total" : "");
    Family* f = nullptr;
    for (Family& g : families) {
      if (g.name == name) f = &g;
    }
    if (f == nullptr) {
      families.push_back({name, "# HELP " + name + " " + s.help + "\n# TYPE " + name + " " + s.type + "\n", ""});
      f = &families.back();
    }
    std::string line = name + "{";
    const char* sep = "";
    for (const auto& [k, v] : s.labels) {
      line += sep + k + "=\"";
      for (char c : v) {
        switch (c) {
          case '\\':
            line += "\\\\";
            break;
          case '"':
            line += "\\\"";
            break;
          case '\n':
            line += "\\n";
            break;
          default:
            line += c;
        }
      }
      line += '"';
      sep = ", ";
    }
    char value[64];
    const auto end = std::to_chars(value, value + sizeof value, s.value).ptr;
    f->lines += line + "} " + std::string(value, end) + "\n";
  }
  std::string out;
  for (const Family& f : families) out += f.head + f.lines;
  return out;
}

}  // namespace exercise
