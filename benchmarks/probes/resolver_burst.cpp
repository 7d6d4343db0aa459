// probes/resolver_burst: a burst of name lookups through the loop's resolver, bounded at
// min(32, CPUs + 4) threads against the unbounded arm (chapter 04).
// Role: measure seed 003's resolver fix on this machine: what a burst of N lookups costs in
// threads, wall time and CPU when at most the bound run at once (the rest queued in order)
// and when every lookup that finds no idle thread gets a new one (the seed's "before").
//
// Method. Per burst: a fresh evloop::Resolver (its threads start lazily, so the burst pays for
// the threads it creates, as the seed's burst did) on one evloop::EventLoop; the loop thread
// asks for N lookups in one go and runs the loop until every callback has run. Wall ms is
// from the first resolve() to the last callback on the loop's monotonic clock; CPU ms is the
// process's CPU clock over the same span (every thread, the exited ones too); context
// switches are the process's (getrusage) over it. Threads started, the most alive at once and
// the most inside the lookup at once are the resolver's own counts. After each burst the
// resolver is destroyed and the probe waits until the process has its threads of before
// again, so no burst's threads exit inside the next burst's span. Rows run in alternating
// order (reversed every other round); each figure is the median over rounds with min and
// max. A warm-up lookup first loads the name-service modules.
//
// Rows. "localhost": the real getaddrinfo("localhost", AF_UNSPEC, SOCK_STREAM), the seed's
// burst: glibc reads /etc/hosts (the "files" service) and answers without a network, in
// microseconds, so the burst prices threads and their contention, not waiting. "sleep-1ms"
// is ARTIFICIAL: the lookup function sleeps a fixed 1 ms and returns nothing, standing in for
// a lookup that waits on a name server (no network is reachable here). It shows the cap's
// price: a thread that waits holds its slot, so N lookups take about N / cap waits in a row.
//
// What it cannot see. The kernel's cost of tearing threads down lands after the span (the
// probe waits for it outside). A lookup of "localhost" never leaves the machine; a real DNS
// lookup's cost and its variance are not modelled beyond the fixed sleep.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include "config/command_line.h"

#include "evloop/event_loop.h"
#include "evloop/resolver.h"
#include "probe_main.h"
#include "probe_report.h"
#include "stats/thread_cpu.h"

namespace handoff::bench {
namespace {

using Json = handoff::probes::Json;
using evloop::LookupRequest;
using evloop::Resolution;
using evloop::ResolverOptions;

[[noreturn]] void fatal(const std::string& what) {
  std::fprintf(stderr, "resolver-burst: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

constexpr std::chrono::milliseconds kArtificialDelay{1};

struct LookupKind {
  std::string_view name;
  bool artificial;
  Resolution (*run)(const LookupRequest&);
};

Resolution sleep_lookup(const LookupRequest& /*request*/) {
  std::this_thread::sleep_for(kArtificialDelay);
  return Resolution{};
}

constexpr std::array kLookups = {LookupKind{"localhost", false, &evloop::system_lookup},
                                 LookupKind{"sleep-1ms", true, &sleep_lookup}};
constexpr std::array<std::string_view, 2> kBounds = {"capped", "unbounded"};

LookupRequest localhost() {
  LookupRequest r;
  r.host = "localhost";
  r.socktype = SOCK_STREAM;
  return r;
}

std::int64_t process_cpu_ns() {
  timespec ts{};
  if (::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) fatal("clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The "Threads:" line of /proc/self/status.
long threads_now() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::strtol(line.c_str() + 8, nullptr, 10);
  }
  fatal("no Threads: line in /proc/self/status");
}

struct Sample {
  double wall_ms = 0;
  double cpu_ms = 0;
  double voluntary_switches = 0;
  double involuntary_switches = 0;
  double threads_started = 0;
  double peak_threads = 0;
  double peak_running = 0;
  std::uint64_t errors = 0;
};

Sample run_burst(evloop::EventLoop& loop, const LookupKind& kind, std::size_t max_threads, int lookups) {
  const long baseline = threads_now();
  Sample s;
  {
    ResolverOptions options;
    options.max_threads = max_threads;
    options.lookup = kind.run;
    evloop::Resolver resolver(loop, std::move(options));
    const LookupRequest request = localhost();
    int delivered = 0;
    rusage r0{}, r1{};
    ::getrusage(RUSAGE_SELF, &r0);
    const std::int64_t c0 = process_cpu_ns();
    const std::int64_t t0 = stats::monotonic_ns();
    for (int i = 0; i < lookups; ++i) {
      resolver.resolve(request, [&](const Resolution& r) {
        ++delivered;
        if (r.error != 0) ++s.errors;
      });
    }
    const std::int64_t deadline = t0 + 120'000'000'000;
    while (delivered != lookups && stats::monotonic_ns() < deadline) loop.run_once(100);
    const std::int64_t t1 = stats::monotonic_ns();
    const std::int64_t c1 = process_cpu_ns();
    ::getrusage(RUSAGE_SELF, &r1);
    if (delivered != lookups) fatal("a burst did not complete within 120 s");
    const evloop::ResolverCounts counts = resolver.counts();
    s.wall_ms = static_cast<double>(t1 - t0) / 1e6;
    s.cpu_ms = static_cast<double>(c1 - c0) / 1e6;
    s.voluntary_switches = static_cast<double>(r1.ru_nvcsw - r0.ru_nvcsw);
    s.involuntary_switches = static_cast<double>(r1.ru_nivcsw - r0.ru_nivcsw);
    s.threads_started = static_cast<double>(counts.threads_started);
    s.peak_threads = static_cast<double>(counts.peak_threads);
    s.peak_running = static_cast<double>(counts.peak_running);
  }
  // The resolver is gone and has told its idle threads to exit: wait until they have.
  const std::int64_t until = stats::monotonic_ns() + 30'000'000'000;
  while (threads_now() > baseline) {
    if (stats::monotonic_ns() > until) fatal("the resolver's threads did not exit within 30 s of its destruction");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return s;
}

// -------------------------------------------------------------------------------------
// --check FILE: the smoke test's judge of a JSON written by this tool.
// -------------------------------------------------------------------------------------

constexpr std::array kFigures = {"wall_ms",         "cpu_ms",       "voluntary_switches", "involuntary_switches",
                                 "threads_started", "peak_threads", "peak_running"};

void judge(const Json& doc, std::vector<std::string>& problems) {
  const Json settings = doc.value("settings", Json::object());
  if (!settings.contains("lookups") || !settings["lookups"].is_number_unsigned() || !settings.contains("cap") ||
      !settings["cap"].is_number_unsigned()) {
    problems.emplace_back("\"settings\" lacks lookups or cap");
  }
  if (!problems.empty()) return;
  const auto lookups = settings["lookups"].get<std::uint64_t>();
  const auto cap = settings["cap"].get<double>();
  for (const LookupKind& k : kLookups) {
    for (const std::string_view bound : kBounds) {
      const std::string where = std::string(k.name) + "/" + std::string(bound);
      const Json* one = handoff::probes::the_one(
          doc["results"], where,
          [&](const Json& r) { return r.value("lookup", "") == k.name && r.value("bound", "") == bound; }, problems);
      if (one == nullptr) continue;
      const Json& r = *one;
      if (r.value("lookups", std::uint64_t{0}) != lookups)
        problems.push_back(where + ".lookups is not " + std::to_string(lookups));
      if (!r.contains("errors") || !r["errors"].is_number_unsigned() || r["errors"].get<std::uint64_t>() != 0) {
        problems.push_back(where + ": some lookups failed (errors is not 0)");
      }
      for (const char* f : kFigures) {
        const Json s = r.value(f, Json());
        const bool ok = s.is_object() && s.contains("median") && s.contains("min") && s.contains("max") &&
                        s["median"].is_number() && s["min"].is_number() && s["max"].is_number() &&
                        s["min"].get<double>() >= 0 && s["min"].get<double>() <= s["median"].get<double>() &&
                        s["median"].get<double>() <= s["max"].get<double>();
        if (!ok) {
          problems.push_back(where + "." + f + " is not a figure with 0 <= min <= median <= max");
        } else if ((std::string_view(f) == "wall_ms" || std::string_view(f) == "threads_started") &&
                   !(s["min"].get<double>() > 0)) {
          problems.push_back(where + "." + f + " is not positive");
        }
      }
      // The bound is a correctness property, not a timing one: the capped arm may never
      // have had more than the cap inside the lookup, nor more threads alive.
      if (bound == "capped") {
        for (const char* f : {"peak_running", "peak_threads"}) {
          const double most = r.value(f, Json::object()).value("max", 0.0);
          if (most > cap) {
            problems.push_back(where + ": " + f + " reached " + std::to_string(static_cast<long>(most)) +
                               ", above the cap of " + std::to_string(static_cast<long>(cap)));
          }
        }
      }
    }
  }
}

void print_table(const Json& doc) {
  std::printf("%-10s %-9s %26s %26s %22s %20s\n", "lookup", "bound", "wall ms median [min-max]",
              "cpu ms median [min-max]", "threads started", "peak running");
  for (const Json& r : doc["results"]) {
    auto cell = [&](const char* f, const char* fmt) {
      char buf[64];
      std::snprintf(buf, sizeof buf, fmt, r[f]["median"].get<double>(), r[f]["min"].get<double>(),
                    r[f]["max"].get<double>());
      return std::string(buf);
    };
    std::printf("%-10s %-9s %26s %26s %22s %20s\n", r["lookup"].get<std::string>().c_str(),
                r["bound"].get<std::string>().c_str(), cell("wall_ms", "%.1f [%.1f-%.1f]").c_str(),
                cell("cpu_ms", "%.1f [%.1f-%.1f]").c_str(), cell("threads_started", "%.0f [%.0f-%.0f]").c_str(),
                cell("peak_running", "%.0f [%.0f-%.0f]").c_str());
  }
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{
      "resolver-burst", "resolver-burst: a burst of name lookups through the bounded resolver and the unbounded arm"};
  handoff::config::CommandLine& cli = probe.cli();
  int lookups = 1000;
  unsigned rounds = 5;
  std::vector<std::string> only_bound;
  cli.add_option("--lookups", lookups, "Lookups per burst")->range(1, 100'000);
  cli.add_option("--rounds", rounds, "Rounds; the report gives the median and min/max of each figure over them")
      ->range(1u, 1000u);
  cli.add_option("--only-bound", only_bound, "Run only this arm (repeatable)")->one_of({"capped", "unbounded"});
  probe.add_report_flags("every row once, every lookup answered, the capped arm within its cap")
      ->excludes("--only-bound");
  if (const auto status = probe.parse(
          argc, argv, true, "lists every row, every lookup answered, and the capped arm within its cap", judge))
    return *status;

  const std::size_t cpus = evloop::affinity_cpus();
  const std::size_t cap = evloop::lookup_cap(cpus);
  if (evloop::system_lookup(localhost()).error != 0) fatal("getaddrinfo(\"localhost\") failed: no row can run");

  struct Cell {
    const LookupKind* kind;
    std::string_view bound;
    std::vector<Sample> samples;
  };
  std::vector<Cell> cells;
  for (const LookupKind& k : kLookups) {
    for (const std::string_view b : kBounds) {
      if (!only_bound.empty() && std::find(only_bound.begin(), only_bound.end(), b) == only_bound.end()) continue;
      cells.push_back(Cell{&k, b, {}});
    }
  }
  evloop::EventLoop loop;
  auto threads_for = [&](std::string_view bound) { return bound == "capped" ? cap : ResolverOptions::kUnbounded; };
  for (Cell& c : cells) run_burst(loop, *c.kind, threads_for(c.bound), std::min(lookups, 100));  // warm-up
  handoff::probes::alternate_arms(rounds, cells.size(), [&](unsigned round, std::size_t k) {
    Cell& c = cells[k];
    c.samples.push_back(run_burst(loop, *c.kind, threads_for(c.bound), lookups));
    if (probe.writes_file()) {
      const Sample& s = c.samples.back();
      std::fprintf(stderr, "round %u/%u %-9s %-9s wall %.1f ms, cpu %.1f ms, threads %.0f, peak running %.0f\n",
                   round + 1, rounds, std::string(c.kind->name).c_str(), std::string(c.bound).c_str(), s.wall_ms,
                   s.cpu_ms, s.threads_started, s.peak_running);
    }
  });

  Json results = Json::array();
  for (const Cell& c : cells) {
    auto pick = [&](double Sample::*field) {
      std::vector<double> xs;
      for (const Sample& s : c.samples) xs.push_back(s.*field);
      return handoff::probes::median_min_max(std::move(xs));
    };
    std::uint64_t errors = 0;
    for (const Sample& s : c.samples) errors += s.errors;
    results.push_back(Json{{"lookup", std::string(c.kind->name)},
                           {"artificial", c.kind->artificial},
                           {"bound", std::string(c.bound)},
                           {"max_threads", c.bound == "capped" ? Json(cap) : Json("unbounded")},
                           {"lookups", lookups},
                           {"rounds", rounds},
                           {"wall_ms", pick(&Sample::wall_ms)},
                           {"cpu_ms", pick(&Sample::cpu_ms)},
                           {"threads_started", pick(&Sample::threads_started)},
                           {"peak_threads", pick(&Sample::peak_threads)},
                           {"peak_running", pick(&Sample::peak_running)},
                           {"voluntary_switches", pick(&Sample::voluntary_switches)},
                           {"involuntary_switches", pick(&Sample::involuntary_switches)},
                           {"errors", errors}});
  }
  return probe.report(Json{{"settings", Json{{"lookups", lookups},
                                             {"rounds", rounds},
                                             {"affinity_cpus", cpus},
                                             {"cap", cap},
                                             {"request", "getaddrinfo(\"localhost\", AF_UNSPEC, SOCK_STREAM)"},
                                             {"artificial_delay_ms", kArtificialDelay.count()}}},
                           {"results", std::move(results)}},
                      print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
