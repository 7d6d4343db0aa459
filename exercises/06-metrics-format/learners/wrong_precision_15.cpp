// exercises/06-metrics-format/learners: values written with 15 significant digits ("a
// double holds 15 digits"). 15 digits hold any 15-digit decimal, but not every double: 1/3
// and 0.1 + 0.2 come back as other numbers. 17 (max_digits10), or the shortest text that
// reads back (std::to_chars), is exact.
#include "exposition.h"

#include <iomanip>
#include <sstream>

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
        if (c == '\\' || c == '"') line += '\\';
        line += c == '\n' ? std::string("\\n") : std::string(1, c);
      }
      line += '"';
      sep = ", ";
    }
    std::ostringstream value;
    value << std::setprecision(15) << s.value;
    f->lines += line + "} " + value.str() + "\n";
  }
  std::string out;
  for (const Family& f : families) out += f.head + f.lines;
  return out;
}

}  // namespace exercise
