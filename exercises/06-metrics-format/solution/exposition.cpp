// exercises/06-metrics-format/solution: one family's lines together, once; counters named
// _total; label values escaped. Built again with -D<MUTANT> for each of the README's mutants.
#include "exposition.h"

#include <cstdio>
#include <map>

namespace exercise {
namespace {

std::string escaped(const std::string& raw) {
  std::string out;
  for (const char c : raw) {
#if defined(NO_ESCAPE)
    out += c;
#elif defined(ESCAPE_QUOTE_ONLY)
    out += c == '"' ? std::string("\\\"") : std::string(1, c);
#else
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
#endif
  }
  return out;
}

// The metric's name as every line prints it: a counter's ends in _total, in its HELP and
// TYPE lines as in its samples (the format's convention, which Prometheus's parsers read).
std::string metric_name(const Sample& s) {
#if defined(NO_TOTAL)
  return s.family;
#else
  return s.type == "counter" ? s.family + "_total" : s.family;
#endif
}

std::string header(const Sample& s) {
  return "# HELP " + metric_name(s) + " " + s.help + "\n# TYPE " + metric_name(s) + " " + s.type + "\n";
}

std::string sample_line(const Sample& s) {
  std::string labels;
  for (const auto& [name, value] : s.labels) labels += (labels.empty() ? "" : ",") + name + "=\"" + escaped(value) + "\"";
  char value[64];
  std::snprintf(value, sizeof value, "%.17g", s.value);
  return metric_name(s) + "{" + labels + "} " + value + "\n";
}

}  // namespace

std::string exposition(const std::vector<Sample>& samples) {
#if defined(TYPE_PER_SAMPLE) || defined(UNGROUPED)
  std::string out;
  std::map<std::string, bool> seen;
  for (const Sample& s : samples) {
#if defined(UNGROUPED)
    if (!seen[s.family])
#endif
      out += header(s);
    seen[s.family] = true;
    out += sample_line(s);
  }
  return out;
#else
  // Group by family, in the order each family first appears.
  std::vector<std::string> order;
  std::map<std::string, std::string> lines;
  for (const Sample& s : samples) {
    auto [it, fresh] = lines.try_emplace(s.family);
    if (fresh) {
      order.push_back(s.family);
      it->second = header(s);
    }
    it->second += sample_line(s);
  }
  std::string out;
  for (const auto& family : order) out += lines[family];
  return out;
#endif
}

}  // namespace exercise
