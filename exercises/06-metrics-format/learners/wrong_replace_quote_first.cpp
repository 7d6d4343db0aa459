// exercises/06-metrics-format/learners: a label value escaped by two replacements, the
// quotes first and then the backslashes: the backslash put in front of each quote is then
// doubled, so the quote is no longer escaped and ends the value early.
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
      std::string e = v;
      for (std::size_t at = 0; (at = e.find('"', at)) != std::string::npos; at += 2) e.replace(at, 1, "\\\"");
      for (std::size_t at = 0; (at = e.find('\\', at)) != std::string::npos; at += 2) e.replace(at, 1, "\\\\");
      for (std::size_t at = 0; (at = e.find('\n', at)) != std::string::npos; at += 2) e.replace(at, 1, "\\n");
      line += e;
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
