// probes/sb_litmus: the store-buffering litmus test, caught in the act (chapter 03).
// Role: run the store-buffering pair (thread A: store X, load Y; thread B: store Y, load
// X) millions of times per ordering variant, pinned to two CPUs and unpinned, and count the
// trials in which both loads saw the old value: the outcome the C++ model allows for every
// ordering weaker than a seq_cst fence (or seq_cst operations) on both sides, and that an
// x86 core produces when each store still sits in its store buffer while the load runs.
//
// Method. Each trial gets its own start time. Thread A (the leader) resets X and Y, reads
// the time-stamp counter, publishes "trial i starts at T = now + lead" and then both
// threads spin until the counter passes T, so the two stores and two loads run within a
// few tens of cycles of each other; without a common start the follower learns of a trial
// a cache transfer (~100 ns) after the leader has finished it, and the outcome never shows.
// Each thread then writes what its load saw to its own result slot; B reports "done i" and
// A tallies the trial's outcome (00, 01, 10, 11: what A's load saw, then B's). A trial in
// which B reached the start line after T is counted as late (the overlap was not arranged);
// its outcome still counts, since it is still a legal execution.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include "config/command_line.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "probe_main.h"
#include "probe_report.h"

namespace handoff::bench {
namespace {

using Json = handoff::probes::Json;

// The clock both threads wait on: the time-stamp counter on x86 (constant-rate and
// synchronised across cores on every machine this book runs on), else CLOCK_MONOTONIC ns.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spin until pred() holds. On a machine with two cores shared with other work the partner
// thread may be descheduled; after a while yield the CPU so that it can run.
template <typename Pred>
void spin_until(Pred pred) {
  for (unsigned n = 0; !pred(); ++n) {
    if (n < 256) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

// -------------------------------------------------------------------------------------
// The variants: one store then one load, with the ordering under test.
// -------------------------------------------------------------------------------------

enum class Variant { relaxed, release_acquire, seq_cst_fence, seq_cst_ops };

struct VariantInfo {
  Variant variant;
  const char* name;
  bool fenced;  // the C++ model forbids both-zero: the smoke test requires a count of 0
};

constexpr VariantInfo kVariants[] = {
    {Variant::relaxed, "relaxed", false},
    {Variant::release_acquire, "release-acquire", false},
    {Variant::seq_cst_fence, "seq_cst-fence", true},
    {Variant::seq_cst_ops, "seq_cst", true},
};

// One side of the pair: store 1 to `mine`, then load `theirs`. The orderings are the point
// of the probe, so each is named here rather than at a pairing site: the other thread runs
// the same function with the two words swapped.
template <Variant V>
inline int store_then_load(std::atomic<int>& mine, std::atomic<int>& theirs) noexcept {
  if constexpr (V == Variant::relaxed) {
    mine.store(1, std::memory_order_relaxed);  // relaxed: orders nothing
    return theirs.load(std::memory_order_relaxed);
  } else if constexpr (V == Variant::release_acquire) {
    mine.store(1, std::memory_order_release);       // release: orders earlier accesses before it, not later loads
    return theirs.load(std::memory_order_acquire);  // acquire: orders later accesses after it, not earlier stores
  } else if constexpr (V == Variant::seq_cst_fence) {
    mine.store(1, std::memory_order_relaxed);             // relaxed: the fence below orders it
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    std::atomic_thread_fence(std::memory_order_seq_cst);  // store → load: pairs with the other side's fence
    return theirs.load(std::memory_order_relaxed);        // relaxed: the fence above orders it
  } else {
    mine.store(1, std::memory_order_seq_cst);       // seq_cst: one total order with the other side's
    return theirs.load(std::memory_order_seq_cst);  // seq_cst: ... so at least one load sees a store
  }
}

// The shared words, each on its own cache line so that a store to one never brings the
// other into the storing core's cache.
struct Shared {
  alignas(64) std::atomic<int> x{0};
  alignas(64) std::atomic<int> y{0};
  alignas(64) std::atomic<std::uint64_t> start{0};  // trial number A published (release)
  std::uint64_t start_at = 0;                       // its start time, written before `start`
  alignas(64) std::atomic<std::uint64_t> done{0};   // trial number B finished (release)
  int seen_by_b = 0;                                // B's load, written before `done`
  bool late = false;                                // B reached the start line after start_at
};

struct Tally {
  std::uint64_t outcome[4] = {0, 0, 0, 0};  // index: A's load * 2 + B's load
  std::uint64_t late = 0;
};

template <Variant V>
Tally run_trials(std::uint64_t trials, std::uint64_t lead, const std::vector<int>& cpus) {
  Shared s;
  Tally tally;
  // Both sides run on threads of their own, so that pinning one never pins the main thread
  // (whose mask every later thread would inherit, putting an unpinned pair on one CPU).
  std::thread b([&] {
    if (!cpus.empty()) handoff::probes::pin_to(cpus[1]);
    for (std::uint64_t i = 1; i <= trials; ++i) {
      spin_until([&] { return s.start.load(std::memory_order_acquire) == i; });  // pairs with A's release of start
      const std::uint64_t at = s.start_at;
      const bool late = ticks() > at;
      while (ticks() < at) {
      }
      const int r = store_then_load<V>(s.y, s.x);
      s.seen_by_b = r;
      s.late = late;
      s.done.store(i, std::memory_order_release);  // publishes seen_by_b and late to A; pairs with A's acquire
    }
  });
  std::thread a([&] {
    if (!cpus.empty()) handoff::probes::pin_to(cpus[0]);
    for (std::uint64_t i = 1; i <= trials; ++i) {
      // relaxed: B's previous trial is over (the acquire of done below) and B reads them
      // only after the release of start, which orders these resets before it.
      s.x.store(0, std::memory_order_relaxed);
      s.y.store(0, std::memory_order_relaxed);
      const std::uint64_t at = ticks() + lead;
      s.start_at = at;
      s.start.store(i, std::memory_order_release);  // publishes the resets and start_at; pairs with B's acquire
      while (ticks() < at) {
      }
      const int r = store_then_load<V>(s.x, s.y);
      spin_until([&] { return s.done.load(std::memory_order_acquire) == i; });  // pairs with B's release of done
      ++tally.outcome[r * 2 + s.seen_by_b];
      if (s.late) ++tally.late;
    }
  });
  a.join();
  b.join();
  return tally;
}

Tally run_variant(Variant v, std::uint64_t trials, std::uint64_t lead, const std::vector<int>& cpus) {
  switch (v) {
    case Variant::relaxed:
      return run_trials<Variant::relaxed>(trials, lead, cpus);
    case Variant::release_acquire:
      return run_trials<Variant::release_acquire>(trials, lead, cpus);
    case Variant::seq_cst_fence:
      return run_trials<Variant::seq_cst_fence>(trials, lead, cpus);
    case Variant::seq_cst_ops:
      return run_trials<Variant::seq_cst_ops>(trials, lead, cpus);
  }
  return {};
}

constexpr const char* kPlacements[] = {"pinned", "unpinned"};
constexpr const char* kOutcomes[] = {"00", "01", "10", "11"};

// -------------------------------------------------------------------------------------
// --check FILE: the smoke test's judge. The shape (every variant × placement once, the
// outcomes adding up to the trials), and the one correctness property: a fenced variant
// never shows both loads reading 0.
// -------------------------------------------------------------------------------------

void judge(const Json& doc, std::vector<std::string>& problems) {
  for (const VariantInfo& v : kVariants) {
    for (const char* placement : kPlacements) {
      const std::string where = std::string(v.name) + "/" + placement;
      const Json* one = handoff::probes::the_one(
          doc["results"], where,
          [&](const Json& r) { return r.value("variant", "") == v.name && r.value("placement", "") == placement; },
          problems);
      if (one == nullptr) continue;
      const Json& r = *one;
      if (r.value("skipped", false)) continue;  // pinning refused: no counts to judge
      bool numbers = true;
      for (const char* k : {"trials", "both_zero", "late"}) {
        if (!r.contains(k) || !r[k].is_number_unsigned()) {
          problems.push_back(where + "." + k + " is not a count");
          numbers = false;
        }
      }
      if (!r.contains("outcomes") || !r["outcomes"].is_object()) {
        problems.push_back(where + ".outcomes is missing");
        continue;
      }
      std::uint64_t sum = 0;
      for (const char* o : kOutcomes) {
        if (!r["outcomes"].contains(o) || !r["outcomes"][o].is_number_unsigned()) {
          problems.push_back(where + ".outcomes." + o + " is not a count");
          numbers = false;
        } else {
          sum += r["outcomes"][o].get<std::uint64_t>();
        }
      }
      if (!r.contains("rate") || !r["rate"].is_number()) problems.push_back(where + ".rate is not a number");
      if (!numbers) continue;
      const auto trials = r["trials"].get<std::uint64_t>();
      const auto both_zero = r["both_zero"].get<std::uint64_t>();
      if (trials == 0) problems.push_back(where + " ran no trials");
      if (sum != trials) problems.push_back(where + ": the outcomes do not add up to the trials");
      if (both_zero != r["outcomes"]["00"].get<std::uint64_t>()) {
        problems.push_back(where + ": both_zero is not outcomes.00");
      }
      if (v.fenced && both_zero != 0) {
        problems.push_back(where + ": both-zero seen " + std::to_string(both_zero) +
                           " times under a seq_cst order that forbids it");
      }
    }
  }
}

void print_table(const Json& doc) {
  std::printf("%-16s %-9s %12s %10s %12s %8s\n", "variant", "placement", "trials", "both-zero", "rate", "late");
  for (const Json& r : doc["results"]) {
    if (r.value("skipped", false)) {
      std::printf("%-16s %-9s  skipped: %s\n", r["variant"].get<std::string>().c_str(),
                  r["placement"].get<std::string>().c_str(), r["reason"].get<std::string>().c_str());
      continue;
    }
    std::printf("%-16s %-9s %12llu %10llu %12.3e %8llu\n", r["variant"].get<std::string>().c_str(),
                r["placement"].get<std::string>().c_str(),
                static_cast<unsigned long long>(r["trials"].get<std::uint64_t>()),
                static_cast<unsigned long long>(r["both_zero"].get<std::uint64_t>()), r["rate"].get<double>(),
                static_cast<unsigned long long>(r["late"].get<std::uint64_t>()));
  }
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{"sb-litmus",
                                   "sb-litmus: how often both loads of the store-buffering pair see the old value"};
  handoff::config::CommandLine& cli = probe.cli();
  std::uint64_t trials = 2'000'000;
  std::uint64_t lead = 2000;
  std::vector<std::string> only;
  std::vector<std::string> names;
  for (const VariantInfo& v : kVariants) names.emplace_back(v.name);
  cli.add_option("--trials", trials, "Trials per variant and placement")->range(1, 1'000'000'000);
  cli.add_option("--lead", lead,
                 "How far ahead the leader sets each trial's common start, in clock ticks (TSC cycles "
                 "on x86): longer than a cache-line transfer between the two cores")
      ->range(1, 100'000'000);
  cli.add_option("--only", only, "Run only this variant (repeatable)")->one_of(names);
  probe.add_report_flags("every variant and placement once, and no both-zero outcome under a fenced variant")
      ->excludes("--only");
  if (const auto status = probe.parse(argc, argv, false,
                                      "lists every variant and placement; the fenced ones never saw both-zero", judge))
    return *status;

  const std::vector<int> cpus = handoff::probes::two_cpus();
  Json results = Json::array();
  for (const VariantInfo& v : kVariants) {
    if (!only.empty() && std::find(only.begin(), only.end(), v.name) == only.end()) continue;
    for (const char* placement : kPlacements) {
      const bool pinned = std::string(placement) == "pinned";
      if (pinned && cpus.empty()) {
        results.push_back(Json{{"variant", v.name},
                               {"placement", placement},
                               {"skipped", true},
                               {"reason", "the process may run on fewer than two CPUs"}});
        continue;
      }
      const Tally t = run_variant(v.variant, trials, lead, pinned ? cpus : std::vector<int>{});
      Json outcomes = Json::object();
      for (int k = 0; k < 4; ++k) outcomes[kOutcomes[k]] = t.outcome[k];
      Json row{{"variant", v.name},
               {"placement", placement},
               {"trials", trials},
               {"both_zero", t.outcome[0]},
               {"rate", static_cast<double>(t.outcome[0]) / static_cast<double>(trials)},
               {"late", t.late},
               {"outcomes", std::move(outcomes)}};
      if (pinned) row["cpus"] = cpus;
      if (probe.writes_file()) {
        std::fprintf(stderr, "%-16s %-9s both-zero %llu of %llu\n", v.name, placement,
                     static_cast<unsigned long long>(t.outcome[0]), static_cast<unsigned long long>(trials));
      }
      results.push_back(std::move(row));
    }
  }
  return probe.report(
      Json {
        {"trials", trials}, {"lead_ticks", lead},
#if defined(__x86_64__) || defined(__i386__)
            {"clock", "tsc"},
#else
            {"clock", "monotonic-ns"},
#endif
        {
          "results", std::move(results)
        }
      },
      print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
