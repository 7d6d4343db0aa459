// peers/loops/loop_peer: the C++ loop peers' shared driver, report and judge (chapter 04).
// Role: runs a Peer's workloads round by round, writes the records contract's JSON, and
// judges such a file (--check) the way loop_peer.py judges the Python peers' files.
#include "loop_peer.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <vector>

#include "config/command_line.h"

#include "probe_report.h"

namespace handoff::peers {

namespace {

using Json = handoff::probes::Json;

std::vector<int> g_pin;              // --pin LOOP,POSTER (empty: not pinned)
std::vector<std::int64_t> g_trips;  // the current round's round trips, ns
std::int64_t g_trip_start = 0;

std::int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void pin_to(int cpu, const char* tool) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) != 0) {
    std::fprintf(stderr, "%s: cannot pin a thread to CPU %d\n", tool, cpu);
    std::exit(2);
  }
}

// Runs one workload; the ping-pong with the loop's thread pinned to --pin's first CPU, and
// the thread's own CPUs given back after, so that no other workload's threads (a pool's,
// started later) inherit the pin.
Span run_pinned(const Peer& peer, Workload w, int n) {
  if (w != Workload::threadsafe_ping_pong || g_pin.size() != 2) return peer.run(w, n);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ::pthread_getaffinity_np(::pthread_self(), sizeof mine, &mine);
  pin_to(g_pin[0], peer.tool);
  const Span s = peer.run(w, n);
  ::pthread_setaffinity_np(::pthread_self(), sizeof mine, &mine);
  return s;
}

// The p-th percentile (nearest rank) of sorted `xs`, in µs.
double percentile_us(const std::vector<std::int64_t>& xs, double p) {
  if (xs.empty()) return 0;
  const auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(xs.size() - 1) + 0.5);
  return static_cast<double>(xs[std::min(rank, xs.size() - 1)]) / 1000.0;
}

struct Named {
  Workload workload;
  const char* name;
};
constexpr Named kWorkloads[] = {{Workload::call_soon_chain, "call_soon_chain"},
                                {Workload::threadsafe_ping_pong, "threadsafe_ping_pong"},
                                {Workload::cancelled_timer, "cancelled_timer"},
                                {Workload::executor_round_trip, "executor_round_trip"},
                                {Workload::tcp_echo, "tcp_echo"}};

double clock_s(clockid_t id) {
  timespec ts{};
  ::clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long process_sleeps() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nvcsw;
}

bool is_figure(const Json& f) {
  if (!f.is_object() || !f.contains("median") || !f.contains("min") || !f.contains("max")) return false;
  if (!f["median"].is_number() || !f["min"].is_number() || !f["max"].is_number()) return false;
  const double lo = f["min"], mid = f["median"], hi = f["max"];
  return lo >= 0 && lo <= mid && mid <= hi;
}

// Why the peer does not run `w`, or null when it does.
const char* not_supported(const Peer& peer, Workload w) {
  for (const auto& [workload, why] : peer.not_supported) {
    if (workload == w) return why;
  }
  return nullptr;
}

// The judge: every workload once, for one loop, with the counts --ops asked for, figures
// over rounds that are ordered, the wall spans not empty, no cancelled timer fired, and the
// wake check's loop asleep at least once (for its live timer). How often it slept beyond
// that is reported, never asserted. A workload the peer does not run is listed once too,
// with its reason and without figures, and only if this peer says it does not run it.
int check_file(const Peer& peer, const std::string& path) {
  const char* tool = peer.tool;
  const auto doc = probes::read_json(path, tool);
  if (!doc) return 1;
  std::vector<std::string> problems;
  const Json& d = *doc;
  if (!d.is_object() || !d.contains("settings") || !d["settings"].contains("ops") || !d.contains("results") ||
      !d["results"].is_array() || !d.contains("machine") || !d.contains("tool")) {
    std::fprintf(stderr, "%s --check: %s lacks tool, machine, settings.ops or results\n", tool, path.c_str());
    return 1;
  }
  const int ops = d["settings"]["ops"];
  const int rounds = d["settings"]["rounds"];
  std::string loop;
  for (const Named& w : kWorkloads) {
    int seen = 0;
    for (const Json& r : d["results"]) {
      if (r.value("workload", "") != w.name) continue;
      ++seen;
      const std::string where = std::string(w.name);
      if (loop.empty()) loop = r.value("loop", "");
      if (r.value("loop", "") != loop || loop.empty()) problems.push_back(where + ": another loop's name, or none");
      if (r.value("ops", -1) != ops_for(w.workload, ops))
        problems.push_back(where + ": ops is not " + std::to_string(ops_for(w.workload, ops)));
      if (r.value("rounds", -1) != rounds) problems.push_back(where + ": rounds is not " + std::to_string(rounds));
      if (r.contains("not_supported")) {
        if (!not_supported(peer, w.workload)) problems.push_back(where + ": not supported, yet this peer runs it");
        if (!r["not_supported"].is_string() || r["not_supported"].get<std::string>().empty())
          problems.push_back(where + ": not_supported gives no reason");
        if (r.contains("cpu_us_per_op") || r.contains("wall_us_per_op") || r.contains("sleeps_per_op"))
          problems.push_back(where + ": not supported, yet it has figures");
        continue;
      }
      if (!r.contains("cpu_us_per_op") || !is_figure(r["cpu_us_per_op"]))
        problems.push_back(where + ": cpu_us_per_op is not an ordered median, min, max");
      if (!r.contains("sleeps_per_op") || !is_figure(r["sleeps_per_op"]))
        problems.push_back(where + ": sleeps_per_op is not an ordered median, min, max");
      if (!r.contains("wall_us_per_op") || !is_figure(r["wall_us_per_op"]) || r["wall_us_per_op"]["min"] <= 0)
        problems.push_back(where + ": wall_us_per_op is not an ordered, positive median, min, max");
      if (w.workload == Workload::cancelled_timer) {
        if (r.value("timers_fired", -1) != 0) problems.push_back(where + ": a cancelled timer fired");
        if (r.value("wake_check_sleeps", 0) < 1)
          problems.push_back(where + ": the wake check's loop never slept (its live timer was not waited for)");
      }
    }
    if (seen != 1) problems.push_back(std::string(w.name) + ": " + std::to_string(seen) + " results, not 1");
  }
  for (const std::string& p : problems) std::fprintf(stderr, "%s --check: %s\n", tool, p.c_str());
  if (!problems.empty()) return 1;
  std::printf("%s --check: %s lists every workload for %s\n", tool, path.c_str(), loop.c_str());
  return 0;
}

}  // namespace

int ops_for(Workload w, int ops) {
  switch (w) {
    case Workload::call_soon_chain:
    case Workload::cancelled_timer:
      return ops;
    default:
      return std::max(1, ops / 10);
  }
}

Stopwatch::Stopwatch()
    : cpu0_(clock_s(CLOCK_PROCESS_CPUTIME_ID)), wall0_(clock_s(CLOCK_MONOTONIC)), sleeps0_(process_sleeps()) {}

Span Stopwatch::stop() const {
  return Span{clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0_, clock_s(CLOCK_MONOTONIC) - wall0_,
              process_sleeps() - sleeps0_};
}

void pin_poster() {
  if (g_pin.size() == 2) pin_to(g_pin[1], "loop-peer");
}

void TripClock::start() noexcept { g_trip_start = now_ns(); }
void TripClock::stop() { g_trips.push_back(now_ns() - g_trip_start); }

TripClock& trips() {
  static TripClock clock;
  return clock;
}

long thread_sleeps() {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_nvcsw;
}

int peer_main(int argc, char** argv, Peer peer,
              const std::function<void(handoff::config::CommandLine&, Peer&)>& own_flags) {
  handoff::config::CommandLine cli{std::string(peer.tool) +
                                   ": the five loop workloads (benchmarks/peers/loops/README.md) on " + peer.loop};
  int ops = 100'000;
  int rounds = 5;
  std::string only;
  std::string json_path;
  std::string check_path;
  cli.add_option("--ops", ops, "Operations per round: the chain and the timers; a tenth for the others")
      ->range(10, 100'000'000);
  cli.add_option("--rounds", rounds, "Rounds; each figure is the median, min and max over them")->range(1, 1000);
  cli.add_option("--only", only, "Run one workload (a partial report, which --check rejects)");
  cli.add_option("--json", json_path, "Write the JSON report to this file (default: stdout)");
  cli.add_option("--check", check_path, "Instead of measuring, judge FILE written by this tool");
  cli.add_option("--pin", g_pin,
                 "LOOP,POSTER: in the ping-pong, pin the loop's thread and the poster to these two CPUs "
                 "(the other workloads run unpinned)")
      ->delimiter(',');
  if (own_flags) own_flags(cli, peer);
  if (const auto status = cli.parse(argc, argv)) return *status;
  if (!check_path.empty()) return check_file(peer, check_path);
  if (!g_pin.empty() && g_pin.size() != 2) {
    std::fprintf(stderr, "%s: --pin takes two CPUs, LOOP,POSTER\n", peer.tool);
    return 2;
  }

  std::vector<const Named*> chosen;
  for (const Named& w : kWorkloads) {
    if (only.empty() || only == w.name) chosen.push_back(&w);
  }
  if (chosen.empty()) {
    std::fprintf(stderr, "%s: no workload named %s\n", peer.tool, only.c_str());
    return 2;
  }
  // Warm-up: each workload once at a tenth of its count, unmeasured (threads, pools,
  // allocator caches and the listening socket's first use).
  for (const Named* w : chosen) {
    if (!not_supported(peer, w->workload)) run_pinned(peer, w->workload, std::max(1, ops_for(w->workload, ops) / 10));
  }

  std::vector<std::vector<double>> cpu(chosen.size()), wall(chosen.size()), sleeps(chosen.size());
  std::vector<std::int64_t> all_trips;  // the ping-pong's round trips over every round
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      if (not_supported(peer, chosen[i]->workload)) continue;
      const int n = ops_for(chosen[i]->workload, ops);
      g_trips.clear();
      g_trips.reserve(static_cast<std::size_t>(n));
      const Span s = run_pinned(peer, chosen[i]->workload, n);
      all_trips.insert(all_trips.end(), g_trips.begin(), g_trips.end());
      cpu[i].push_back(s.cpu_s * 1e6 / n);
      wall[i].push_back(s.wall_s * 1e6 / n);
      sleeps[i].push_back(static_cast<double>(s.sleeps) / n);
    }
  }
  Json results = Json::array();
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    Json r{{"loop", peer.loop},
           {"workload", chosen[i]->name},
           {"ops", ops_for(chosen[i]->workload, ops)},
           {"rounds", rounds}};
    if (const char* why = not_supported(peer, chosen[i]->workload)) {
      r["not_supported"] = why;
      results.push_back(r);
      continue;
    }
    r["cpu_us_per_op"] = probes::median_min_max(cpu[i]);
    r["wall_us_per_op"] = probes::median_min_max(wall[i]);
    r["sleeps_per_op"] = probes::median_min_max(sleeps[i]);
    if (chosen[i]->workload == Workload::threadsafe_ping_pong && !all_trips.empty()) {
      std::sort(all_trips.begin(), all_trips.end());
      r["trip_wall_us"] = {{"p10", percentile_us(all_trips, 10)},
                           {"p50", percentile_us(all_trips, 50)},
                           {"p90", percentile_us(all_trips, 90)},
                           {"p99", percentile_us(all_trips, 99)}};
    }
    if (chosen[i]->workload == Workload::cancelled_timer) {
      r["timers_fired"] = 0;  // every program ends at once on a cancelled timer that fires
      r["wake_check_sleeps"] = peer.wake_check();
    }
    results.push_back(r);
  }
  Json settings{{"ops", ops}, {"rounds", rounds}};
  if (g_pin.size() == 2) settings["pin"] = {{"loop_cpu", g_pin[0]}, {"poster_cpu", g_pin[1]}};
  const Json doc{{"tool", peer.tool},
                 {"machine", probes::machine()},
                 {"settings", settings},
                 {"results", results}};
  if (json_path.empty()) {
    std::cout << doc.dump(2) << '\n';
    return 0;
  }
  return probes::write_json(json_path, doc, peer.tool) ? 0 : 1;
}

}  // namespace handoff::peers
