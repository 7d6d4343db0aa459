// probes/loop_wake_stress: seed 003's lost-wake stress on our loop's flag (chapter 03).
// Role: ping-pong 100k wakes between a pool thread and a loop thread that waits with no
// deadline, through the real pool::CompletionRing with its two fences and without them
// (CompletionRingSeams::fences, for tests only), each push aligned in time with the loop's
// announcement, and count the wakes lost: a stall is a wake nothing but a poke would end.
//
// Method (testkit/loop_wake_pingpong.h). The loop thread runs the loop's side exactly as a
// worker's turn does after ready_to_wait(): announce_wait() (raise the flag), has_frames()
// (the re-check), poll(loop_fd, -1), end_wait(), drain. After each drain it picks the next
// wake's start on the time-stamp counter, T = now + --lead ticks, and the pool thread's,
// T plus an offset drawn per wake within +-(--jitter) ticks, and publishes both with its
// pong; it spins until T and announces. The pool thread spins until its own start and
// pushes with CompletionRing::push (push → read the flag → poke if raised). Both threads
// are pinned, each to its own CPU (--unpinned leaves them to the scheduler), so that both
// spin at once. This is the store-buffering litmus's trick (sb_litmus.cpp: a common start
// time): the two store→load steps run within tens of cycles of each other, in every
// relative order the offsets give. A stall is SEEN, not inferred from a timeout alone: no
// pong for --stall-ms, and the loop's thread sleeps (state S in /proc: in its poll, not
// merely descheduled) with its flag raised and the frame in the ring; nothing will wake it,
// so the stall is counted, the pool thread pokes the loop (that poke is not counted with
// the ring's) and the run goes on, so one run yields a rate. No pong at all for
// --give-up-ms counts a stall and ends the run. Variants alternate within each round of runs (on,
// off, then off, on, ...) so that drift hits both alike.
//
// What x86 can reorder without the fences (objdump -d --no-show-raw-insn of
// completion_ring.cpp.o, GCC 12 -O2). The loop's announce_wait() stores the flag with a
// plain `movb $0x1` (the production code's relaxed store), tests options_.fences and, when
// they are off, returns without the fence; has_frames() (inlined into the caller) then
// loads the ring's dequeue counter and the cell's sequence with plain `mov` loads. The pool
// thread's push() claims a cell with `lock cmpxchg` BEFORE it writes it, then publishes the
// frame with a plain `mov` store of the cell's sequence, and poke_loop_if_waiting() reads
// the flag with a plain `movzbl` load; the locked `xchg` that claims the poke runs only after
// that load saw the flag raised. So each side is a plain store followed by a plain load of
// the other side's word with no locked instruction between them: the store-buffering pair,
// which x86-TSO does reorder (the store waits in the store buffer while the load runs). With
// the fences on, each side has GCC's seq_cst fence, `lock orq $0x0,(%rsp)` (a locked no-op
// on the stack: a full barrier), between the two. The flag store was a plain store already,
// so the "off" variant needs no change to it.
//
// What this shape can show on x86. A stall needs both loads to read old values: the loop's
// re-check runs while its flag store still waits in its store buffer, AND the pool thread's
// read of the flag runs while its frame's store still waits in its own. Seed 003's plain
// shape (push as soon as the pong is seen) almost never met that: the pong was stored just
// before the flag, and x86 drains a core's stores in order, so the flag was visible by the
// time the pool read it (on the 2-vCPU VM: 0 stalls in 23 runs, pokes per wake 0.99999).
// The aligned start puts the two steps together; how often they overlap is in the report:
// recheck_catches_per_wake (the push landed before the re-check) near a half and
// loop_waits_per_wake the rest say the offsets straddle the loop's step, late_per_wake
// that the pool thread reached its start in time (unpinned, the two threads often share a
// CPU: on the 2-vCPU VM most pushes were late and no stall showed). Unfenced, each stall is
// a loop wait with no poke (loop waits = pokes + stalls, give or take a poke left over from
// a re-check catch); fenced, stalls must be 0, and --check says so.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "config/command_line.h"

#include "pool/completion_ring.h"
#include "probe_main.h"
#include "probe_report.h"
#include "testkit/loop_wake_pingpong.h"

namespace handoff::bench {
namespace {

using Json = handoff::probes::Json;

constexpr const char* kTool = "loop-wake-stress";
constexpr const char* kVariants[] = {"on", "off"};  // --fences

// -------------------------------------------------------------------------------------
// --check FILE: the smoke test's judge. The shape (both variants once, the counts
// consistent), and one correctness property: the fenced ring never stalled. The unfenced
// variant's stalls are reported, never asserted here: a short smoke run may show none (the
// Catch2 negative control in completion_ring_test requires them, over 100k wakes).
// -------------------------------------------------------------------------------------

void judge(const Json& doc, std::vector<std::string>& problems) {
  for (const char* v : kVariants) {
    const std::string where = std::string("fences ") + v;
    const Json* one = handoff::probes::the_one(doc["results"], where, handoff::probes::named("fences", v), problems);
    if (one == nullptr) continue;
    const Json& r = *one;
    bool counts = true;
    for (const char* k : {"runs", "wakes_per_run", "wakes", "stalls", "stalled_runs", "first_stall_at"}) {
      if (!r.contains(k) || !r[k].is_number_unsigned()) {
        problems.push_back(where + ": " + k + " is not a count");
        counts = false;
      }
    }
    for (const char* k : {"stall_at", "stalls_per_run"}) {
      if (!r.contains(k) || !r[k].is_array()) {
        problems.push_back(where + ": no " + k + " list");
        counts = false;
      }
    }
    if (!r.contains("stalls_per_100k") || !r["stalls_per_100k"].is_number()) {
      problems.push_back(where + ": stalls_per_100k is not a number");
    }
    for (const char* k : {"wall_s", "wakes_per_s"}) {
      if (!r.contains(k) || !r[k].is_object() || !(r[k].value("median", 0.0) > 0)) {
        problems.push_back(where + ": " + k + ".median is not a positive number");
      }
    }
    if (!counts) continue;
    const auto runs = r["runs"].get<std::uint64_t>();
    const auto stalls = r["stalls"].get<std::uint64_t>();
    const auto stalled = r["stalled_runs"].get<std::uint64_t>();
    std::uint64_t sum = 0, nonzero = 0;
    for (const Json& n : r["stalls_per_run"]) {
      const std::uint64_t v = n.is_number_unsigned() ? n.get<std::uint64_t>() : 0;
      sum += v;
      nonzero += v > 0 ? 1 : 0;
    }
    if (runs == 0) problems.push_back(where + " ran no runs");
    if (r["wakes"].get<std::uint64_t>() > runs * r["wakes_per_run"].get<std::uint64_t>()) {
      problems.push_back(where + ": more wakes than its runs ask for");
    }
    if (r["stalls_per_run"].size() != runs || sum != stalls || nonzero != stalled) {
      problems.push_back(where + ": stalls_per_run does not agree with runs, stalls and stalled_runs");
    }
    if (r["stall_at"].size() != stalled) problems.push_back(where + ": stall_at does not list every stalled run");
    if (std::string(v) == "on" && stalls != 0) {
      problems.push_back(where + ": " + std::to_string(stalls) + " stalls in " + std::to_string(stalled) + " of " +
                         std::to_string(runs) + " runs: a wake was lost with both fences in place");
    }
  }
}

struct Tally {
  std::vector<double> wall_s, wakes_per_s, waits_per_wake, catches_per_wake, pokes_per_wake, late_per_wake;
  std::vector<std::uint64_t> stalls_per_run;
  std::vector<std::uint64_t> stall_at;  // the first stall of each run that stalled
  std::uint64_t wakes = 0;              // wakes completed, all runs together
  unsigned runs = 0;
};

void print_table(const Json& doc) {
  std::printf("%-6s %5s %10s %7s %12s %8s %14s %12s %10s\n", "fences", "runs", "wakes", "stalls", "per 100k", "stalled",
              "wakes/s median", "waits/wake", "pokes/wake");
  for (const Json& r : doc["results"]) {
    std::printf("%-6s %5u %10llu %7llu %12.2f %8zu %14.0f %12.3f %10.3f\n", r["fences"].get<std::string>().c_str(),
                r["runs"].get<unsigned>(), static_cast<unsigned long long>(r["wakes"].get<std::uint64_t>()),
                static_cast<unsigned long long>(r["stalls"].get<std::uint64_t>()), r["stalls_per_100k"].get<double>(),
                r["stalled_runs"].get<std::size_t>(), r["wakes_per_s"]["median"].get<double>(),
                r["loop_waits_per_wake"]["median"].get<double>(), r["pokes_per_wake"]["median"].get<double>());
  }
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{
      kTool, "loop-wake-stress: wakes ping-ponged against a loop parked with no deadline, fenced and not"};
  handoff::config::CommandLine& cli = probe.cli();
  std::vector<std::string> fences{"on", "off"};
  unsigned runs = 3;
  testkit::PingPongOptions po;
  unsigned stall_ms = 20;
  unsigned give_up_ms = 5000;
  cli.add_option("--fences", fences,
                 "Variants to run, alternated within each round: on (the ring as it ships) and off (both "
                 "seq_cst fences dropped, the broken variant)")
      ->one_of({"on", "off"})
      ->delimiter(',');
  cli.add_option("--runs", runs, "Runs per variant (the seed ran 3)")->range(1u, 1000u);
  cli.add_option("--wakes", po.wakes, "Wakes (ping-pongs) per run")->range(1, 100'000'000);
  cli.add_option("--lead", po.lead_ticks,
                 "How far ahead of its pong the loop sets the next wake's common start, in clock ticks "
                 "(TSC cycles on x86): longer than the pong's trip to the other core")
      ->range(1, 100'000'000);
  cli.add_option("--jitter", po.jitter_ticks,
                 "The pool thread's start is the loop's plus an offset drawn per wake within +-this many ticks")
      ->range(0, 1'000'000);
  cli.add_option("--stall-ms", stall_ms,
                 "No pong for this long: if the loop sleeps with its flag raised and the frame waiting, "
                 "count a stall, poke it and go on")
      ->range(1u, 600'000u);
  cli.add_option("--give-up-ms", give_up_ms, "No pong at all for this long counts a stall and ends the run")
      ->range(10u, 600'000u);
  bool unpinned = false;
  cli.add_flag("--unpinned", unpinned,
               "Leave the two threads where the scheduler puts them (default: each on its own CPU)");
  probe.add_report_flags("both variants once, and no stall with the fences on");
  if (const auto status = probe.parse(argc, argv, true, "lists both variants; the fenced ring never stalled", judge))
    return *status;
  po.stall_after = std::chrono::milliseconds(stall_ms);
  po.pinned = !unpinned;
  po.give_up = std::chrono::milliseconds(std::max(give_up_ms, stall_ms));

  std::vector<std::string> selected;
  for (const char* v : kVariants) {
    if (std::find(fences.begin(), fences.end(), v) != fences.end()) selected.emplace_back(v);
  }
  std::vector<Tally> tallies(selected.size());
  // A run of each variant is a round; the variants alternate within it (alternate_arms), so
  // each round's pair of runs can be compared (the harness's paired verdict).
  handoff::probes::alternate_arms(runs, selected.size(), [&](unsigned run, std::size_t k) {
    pool::CompletionRingSeams o;
    o.fences = selected[k] == "on";
    pool::CompletionRing ring(1024, o);
    const testkit::PingPongResult r = testkit::loop_wake_pingpong(ring, po);
    Tally& t = tallies[k];
    ++t.runs;
    const double done = static_cast<double>(r.wakes);
    t.wakes += r.wakes;
    t.wall_s.push_back(r.wall_s);
    // A run that ended early counts the wakes before its end; its time includes the bound.
    t.wakes_per_s.push_back(done / r.wall_s);
    t.waits_per_wake.push_back(done > 0 ? static_cast<double>(r.loop_waits) / done : 0);
    t.catches_per_wake.push_back(done > 0 ? static_cast<double>(r.recheck_catches) / done : 0);
    t.pokes_per_wake.push_back(done > 0 ? static_cast<double>(r.pokes) / done : 0);
    t.late_per_wake.push_back(done > 0 ? static_cast<double>(r.late) / done : 0);
    t.stalls_per_run.push_back(r.stalls);
    if (r.stalls > 0) t.stall_at.push_back(r.first_stall_at);
    std::fprintf(stderr,
                 "run %u/%u fences %-3s %llu of %llu wakes, %llu stalls (first at %llu)%s after %.2f s; "
                 "loop waits %llu, re-check catches %llu, pokes %llu, late %llu\n",
                 run + 1, runs, selected[k].c_str(), static_cast<unsigned long long>(r.wakes),
                 static_cast<unsigned long long>(po.wakes), static_cast<unsigned long long>(r.stalls),
                 static_cast<unsigned long long>(r.first_stall_at), r.ended_early ? ", ENDED EARLY" : "", r.wall_s,
                 static_cast<unsigned long long>(r.loop_waits), static_cast<unsigned long long>(r.recheck_catches),
                 static_cast<unsigned long long>(r.pokes), static_cast<unsigned long long>(r.late));
  });

  Json results = Json::array();
  for (std::size_t k = 0; k < selected.size(); ++k) {
    const Tally& t = tallies[k];
    std::uint64_t stalls = 0;
    for (const std::uint64_t n : t.stalls_per_run) stalls += n;
    results.push_back(
        Json{{"fences", selected[k]},
             {"runs", t.runs},
             {"wakes_per_run", po.wakes},
             {"wakes", t.wakes},
             {"stalls", stalls},
             {"stalls_per_100k", t.wakes > 0 ? 1e5 * static_cast<double>(stalls) / static_cast<double>(t.wakes) : 0.0},
             {"stalled_runs", t.stall_at.size()},
             {"stalls_per_run", t.stalls_per_run},
             {"first_stall_at", t.stall_at.empty() ? 0 : t.stall_at.front()},
             {"stall_at", t.stall_at},
             {"wall_s", handoff::probes::median_min_max(t.wall_s)},
             {"wakes_per_s", handoff::probes::median_min_max(t.wakes_per_s)},
             {"loop_waits_per_wake", handoff::probes::median_min_max(t.waits_per_wake)},
             {"recheck_catches_per_wake", handoff::probes::median_min_max(t.catches_per_wake)},
             {"pokes_per_wake", handoff::probes::median_min_max(t.pokes_per_wake)},
             {"late_per_wake", handoff::probes::median_min_max(t.late_per_wake)}});
  }
  return probe.report(Json{{"settings", Json{{"runs", runs},
                                             {"wakes", po.wakes},
                                             {"lead_ticks", po.lead_ticks},
                                             {"jitter_ticks", po.jitter_ticks},
                                             {"stall_ms", stall_ms},
                                             {"give_up_ms", give_up_ms},
                                             {"pinned", po.pinned},
                                             {"fences", selected}}},
                           {"results", std::move(results)}},
                      print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
