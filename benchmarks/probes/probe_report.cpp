// probes/probe_report: what the probes share (chapter 01).
#include "probe_report.h"

#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fstream>
#include <thread>

#include "testkit/cpu_pin.h"

namespace handoff::probes {

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string fallback;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (key == "model name") return value;                                               // x86
    if (fallback.empty() && (key == "Hardware" || key == "CPU part")) fallback = value;  // arm
  }
  return fallback.empty() ? std::string("unknown") : fallback;
}
}  // namespace

Json machine() {
  utsname u{};
  ::uname(&u);
  return Json{{"cpu", cpu_model()},
              {"cores", std::thread::hardware_concurrency()},
              {"kernel", std::string(u.release)},
              {"arch", std::string(u.machine)}};
}

Json median_min_max(std::vector<double> xs) {
  if (xs.empty()) return Json{{"median", 0.0}, {"min", 0.0}, {"max", 0.0}, {"rounds", Json::array()}};
  Json rounds = xs;  // in round order, before the sort
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  const double median = n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
  return Json{{"median", median}, {"min", xs.front()}, {"max", xs.back()}, {"rounds", std::move(rounds)}};
}

double percentile(std::vector<double> xs, double q) {
  if (xs.empty()) return 0;
  const auto i = std::min(static_cast<std::size_t>(q * static_cast<double>(xs.size() - 1) + 0.5), xs.size() - 1);
  std::nth_element(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(i), xs.end());
  return xs[i];
}

std::vector<int> two_cpus() { return testkit::two_cpus(); }

bool pin_to(int cpu) { return testkit::pin_to(cpu); }

bool write_json(const std::string& path, const Json& doc, const char* tool) {
  std::ofstream out(path);
  out << doc.dump(2) << '\n';
  out.close();
  if (!out) std::fprintf(stderr, "%s: cannot write %s\n", tool, path.c_str());
  return static_cast<bool>(out);
}

std::optional<Json> read_json(const std::string& path, const char* tool) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "%s --check: cannot open %s\n", tool, path.c_str());
    return std::nullopt;
  }
  try {
    return Json::parse(in);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s --check: %s is not JSON: %s\n", tool, path.c_str(), e.what());
    return std::nullopt;
  }
}

std::vector<std::string> envelope_problems(const Json& doc, const char* tool, bool with_settings) {
  std::vector<std::string> problems;
  if (doc.value("tool", "") != tool) problems.push_back(std::string("\"tool\" is not ") + tool);
  if (!doc.contains("machine") || !doc["machine"].is_object()) problems.emplace_back("no \"machine\"");
  if (with_settings && (!doc.contains("settings") || !doc["settings"].is_object())) {
    problems.emplace_back("no \"settings\"");
  }
  if (!doc.contains("results") || !doc["results"].is_array()) problems.emplace_back("no \"results\" array");
  return problems;
}

void positive_medians(const Json& r, const std::string& where, std::initializer_list<const char*> keys,
                      std::vector<std::string>& problems) {
  for (const char* k : keys) {
    if (!r.contains(k) || !r[k].is_object() || !(r[k].value("median", 0.0) > 0)) {
      problems.push_back(where + ": " + k + ".median is not a positive number");
    }
  }
}

const Json* the_one(const Json& results, const std::string& where, const std::function<bool(const Json& r)>& is,
                    std::vector<std::string>& problems) {
  const Json* one = nullptr;
  int found = 0;
  for (const Json& r : results) {
    if (!is(r)) continue;
    one = &r;
    ++found;
  }
  if (found == 1) return one;
  problems.push_back(where + " appears " + std::to_string(found) + " times (expected once)");
  return nullptr;
}

std::function<bool(const Json& r)> named(const char* key, const std::string& value) {
  return [key, value](const Json& r) { return r.value(key, "") == value; };
}

int check_verdict(const std::vector<std::string>& problems, const char* tool, const std::string& path,
                  const std::string& passed) {
  for (const std::string& p : problems) std::fprintf(stderr, "%s --check: %s\n", tool, p.c_str());
  if (!problems.empty()) return 1;
  std::printf("%s --check: %s %s\n", tool, path.c_str(), passed.c_str());
  return 0;
}

int check_report(const std::string& path, const char* tool, bool with_settings, const std::string& passed,
                 const std::function<void(const Json& doc, std::vector<std::string>& problems)>& judge) {
  const std::optional<Json> read = read_json(path, tool);
  if (!read) return 1;
  std::vector<std::string> problems = envelope_problems(*read, tool, with_settings);
  if (read->contains("results") && (*read)["results"].is_array()) judge(*read, problems);
  return check_verdict(problems, tool, path, passed);
}

void print_columns(const Json& doc, int arm_width, std::initializer_list<Column> columns) {
  std::printf("%-*s", arm_width, "arm");
  for (const Column& c : columns) std::printf(" %*s", c.width, c.head);
  std::printf("\n");
  for (const Json& r : doc["results"]) {
    std::printf("%-*s", arm_width, r["arm"].get<std::string>().c_str());
    for (const Column& c : columns) {
      const Json& v = *c.field != '\0' ? r[c.key][c.field] : r[c.key];
      std::printf(" %*.*f", c.width, c.decimals, v.get<double>());
    }
    std::printf("\n");
  }
}

int emit_report(const Json& doc, const std::string& path, const char* tool,
                const std::function<void(const Json&)>& print_table) {
  if (path.empty()) {
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  if (!write_json(path, doc, tool)) return 1;
  print_table(doc);
  return 0;
}

}  // namespace handoff::probes
