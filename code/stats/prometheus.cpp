// stats/prometheus: the /stats counters in Prometheus's text exposition format (chapter 06).
#include "stats/prometheus.h"

#include <cstdio>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::stats {
namespace {

// A metric name keeps [a-zA-Z0-9_:] and may not start with a digit; anything else becomes '_'.
std::string metric_name(std::string_view raw) {
  std::string out;
  for (const char c : raw) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
    out += ok ? c : '_';
  }
  if (!out.empty() && out[0] >= '0' && out[0] <= '9') out.insert(out.begin(), '_');
  return out;
}

// A label value escapes backslash, double quote and line feed, as the format requires.
std::string label_value(std::string_view raw) {
  std::string out;
  for (const char c : raw) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// A count prints as an integer; a figure with a fraction (CPU seconds) with the digits a
// double holds that a reader can use.
std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, v == static_cast<double>(static_cast<long long>(v)) ? "%.0f" : "%.9g", v);
  return buf;
}

// One family: its samples must follow its # HELP and # TYPE lines together, once.
struct Family {
  std::string help;
  std::string type;
  std::vector<std::string> samples;  // "{labels} value"
};

/// Samples gathered by metric family, then written in the text format.
class Exposition {
 public:
  void sample(const std::string& name, const std::string& type, const std::string& help, const std::string& labels,
              const std::string& value) {
    auto [it, fresh] = families_.try_emplace(name);
    if (fresh) {
      order_.push_back(name);
      it->second.help = help;
      it->second.type = type;
    }
    it->second.samples.push_back(labels + " " + value);
  }

  std::string text() const {
    std::string out;
    for (const auto& name : order_) {
      const Family& f = families_.at(name);
      out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + f.type + "\n";
      for (const auto& s : f.samples) out += name + s + "\n";
    }
    return out;
  }

 private:
  std::map<std::string, Family> families_;
  std::vector<std::string> order_;
};

// A section's leaves: numbers and booleans are gauges, strings are labels of one info sample.
void flatten(const std::string& prefix, const nlohmann::json& node, Exposition& out,
             std::vector<std::pair<std::string, std::string>>& info) {
  for (const auto& [key, value] : node.items()) {
    const std::string name = prefix + "_" + metric_name(key);
    if (value.is_object()) {
      flatten(name, value, out, info);
    } else if (value.is_boolean()) {
      out.sample(name, "gauge", "a section's flag (1: true)", "", value.get<bool>() ? "1" : "0");
    } else if (value.is_number()) {
      out.sample(name, "gauge", "a section's figure, as /stats shows it", "", number(value.get<double>()));
    } else if (value.is_string()) {
      info.emplace_back(metric_name(name.substr(prefix.size() + 1)), value.get<std::string>());
    }
  }
}

}  // namespace

std::string to_prometheus(const nlohmann::json& stats) {
  Exposition out;
  const auto threads = stats.find("threads");
  for (const auto& thread : threads != stats.end() ? *threads : nlohmann::json::array()) {
    const std::string labels = "{thread=\"" + label_value(thread.value("name", "")) + "\",role=\"" +
                               label_value(thread.value("role", "")) + "\"}";
    out.sample("handoff_thread_cpu_seconds_total", "counter", "CPU time the thread has used (CLOCK_THREAD_CPUTIME_ID)",
               labels, number(thread.value("cpu_us", 0.0) / 1e6));
    const auto counters = thread.find("counters");
    if (counters == thread.end()) continue;
    for (const auto& [counter, value] : counters->items()) {
      // pg_peak_open is a high-water mark, not a count of events: a gauge, without _total.
      const bool gauge = counter == "pg_peak_open";
      // A counter of microseconds is exported in seconds, the format's base unit (promtool
      // check metrics refuses an abbreviated unit in a name): stack_lock_wait_us becomes
      // stack_lock_wait_seconds_total.
      const bool micros = counter.size() > 3 && counter.ends_with("_us");
      const std::string base = micros ? counter.substr(0, counter.size() - 3) + "_seconds" : counter;
      const std::string name = "handoff_" + metric_name(base) + (gauge ? "" : "_total");
      out.sample(name, gauge ? "gauge" : "counter", "the thread's " + counter + " counter (stats/thread_stats.h)",
                 labels, number(value.get<double>() / (micros ? 1e6 : 1.0)));
    }
  }
  for (const auto& [key, section] : stats.items()) {
    if (key == "threads" || !section.is_object()) continue;
    const std::string prefix = "handoff_" + metric_name(key);
    std::vector<std::pair<std::string, std::string>> info;
    flatten(prefix, section, out, info);
    if (info.empty()) continue;
    std::string labels = "{";
    for (const auto& [label, value] : info) labels += (labels.size() > 1 ? "," : "") + label + "=\"" + label_value(value) + "\"";
    out.sample(prefix + "_info", "gauge", "the " + key + " section's words, as labels", labels + "}", "1");
  }
  return out.text();
}

}  // namespace handoff::stats
