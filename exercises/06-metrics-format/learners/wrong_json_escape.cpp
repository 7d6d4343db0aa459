// exercises/06-metrics-format/learners: a label value quoted and escaped as a JSON string
// ("the same quotes and backslashes"). JSON escapes more than the exposition format does: a
// tab is written \t, which a scraper reads as a backslash and a t.
#include "exposition.h"

#include <charconv>

#include <nlohmann/json.hpp>

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
      line.pop_back();  // the JSON string brings its own quotes
      line += nlohmann::json(v).dump();
      line.pop_back();
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
