// probes/stack_lock_probe: what one shared stack lock costs W workers that send through it
// (chapter 05, seed 004).
// Role: a standalone model of seed 004's shape. W worker threads each own a socket pair and
// loop: send a small reply through a stack::NetworkStack (the measured call), then poll
// their own peer, without sleeping, until the reply has arrived (a spinning worker, as the
// seed's pool workers were). The arms:
//   shared           one stack for all workers, buzz --buzz-us (seed: min(EF_POLL_USEC, 100 us))
//   per-worker       one stack per worker (seed 004's fix)
//   shared-handoff   one stack, the hand-off variant (--handoff-us)
//   shared-buzz-long one stack, buzz --long-buzz-us (seed: EF_BUZZ_USEC=100000)
// The packet pool is small on purpose (--free-pool buffers lock-free, --refill per refill),
// so that a send finds it empty every few sends and must take the lock blocking: the
// seed's tcp_send_nonb_pool_empty, the path on which a sleeper can be starved.
//
// Per arm and round (--seconds after a 50 ms warm-up; arms alternate, the order reversed
// every other round): sends per second; the latency of each send() call pooled over rounds
// and workers into p50/p99/max; and per send: lock contends, deferred sends, pool-empty
// sends, lock sleeps, lock wakes and hand-offs, from the stacks' own counters.
//
// Where this model and the seed's system differ: no Onload, no NIC, no TCP: the transmit is
// a ::send on an AF_UNIX socket pair, and the stack lock is this project's model of
// Onload's (stack/stack_lock.h says what it keeps). The seed's stall needed 32 sessions on
// several workers at 100 us buzz; on a 2-core machine W spinning workers share two cores,
// so a sleeper is as likely to wait for a core as for the lock. Report what it shows.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "config/command_line.h"

#include "probe_main.h"
#include "probe_report.h"
#include "stack/network_stack.h"
#include "stats/thread_cpu.h"

namespace handoff::bench {
namespace {

using handoff::probes::Json;
constexpr const char* kTool = "stack-lock-probe";
const std::vector<std::string> kArms{"shared", "per-worker", "shared-handoff", "shared-buzz-long"};

struct Settings {
  unsigned workers = 4;
  double seconds = 0.5;
  unsigned rounds = 3;
  std::int64_t buzz_us = 100;
  std::int64_t long_buzz_us = 100'000;
  std::int64_t handoff_us = 1'000;
  unsigned free_pool = 4;
  unsigned refill = 4;
  unsigned bytes = 64;
};

struct RunResult {
  double wall_s = 0;
  std::uint64_t sends = 0;
  std::vector<double> latency_us;
  stack::NetworkStackCounters totals;
};

stack::NetworkStackOptions options_for(const Settings& s, const std::string& arm) {
  stack::NetworkStackOptions o;
  o.lock.buzz_ns = stack::buzz_ns_from_us(arm == "shared-buzz-long" ? s.long_buzz_us : s.buzz_us);
  o.lock.handoff_after_ns = arm == "shared-handoff" ? s.handoff_us * 1000 : 0;
  o.pool.packets = 256;
  o.pool.packet_bytes = std::max(64U, s.bytes);
  o.pool.free_pool = s.free_pool;
  o.pool.refill_batch = s.refill;
  return o;
}

void add_counters(stack::NetworkStackCounters& to, const stack::NetworkStackCounters& c) {
  to.sends += c.sends;
  to.sends_deferred += c.sends_deferred;
  to.send_lock_contends += c.send_lock_contends;
  to.pool_empty_sends += c.pool_empty_sends;
  to.transmit_errors += c.transmit_errors;
  to.lock.lock_sleeps += c.lock.lock_sleeps;
  to.lock.lock_wakes += c.lock.lock_wakes;
  to.lock.lock_handoffs += c.lock.lock_handoffs;
  to.lock.lock_contends += c.lock.lock_contends;
}

RunResult run_arm(const Settings& s, const std::string& arm) {
  const bool per_worker = arm == "per-worker";
  std::vector<std::unique_ptr<stack::NetworkStack>> stacks;
  for (unsigned i = 0; i < (per_worker ? s.workers : 1U); ++i) {
    stacks.push_back(std::make_unique<stack::NetworkStack>(options_for(s, arm)));
  }
  std::vector<std::array<int, 2>> pairs(s.workers);
  for (auto& p : pairs) {
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p.data()) != 0) std::perror("socketpair");
  }
  std::atomic<int> phase{0};  // 0 warm-up, 1 measuring, 2 stop
  std::vector<std::vector<double>> lat(s.workers);
  std::vector<std::uint64_t> sends(s.workers, 0);
  std::vector<std::thread> threads;
  const std::string msg(s.bytes, 'r');
  for (unsigned w = 0; w < s.workers; ++w) {
    threads.emplace_back([&, w] {
      stack::NetworkStack& st = *stacks[per_worker ? w : 0];
      stack::StackSocket socket(pairs[w][0]);
      char buf[4096];
      // relaxed: a phase flag for a measurement; the join orders the results.
      for (int ph; (ph = phase.load(std::memory_order_relaxed)) != 2;) {
        const std::int64_t t0 = stats::monotonic_ns();
        st.send(socket, msg.data(), msg.size());
        const std::int64_t t1 = stats::monotonic_ns();
        if (ph == 1) {
          lat[w].push_back(static_cast<double>(t1 - t0) / 1e3);
          ++sends[w];
        }
        // Spin on our own peer until the reply is there (a deferred one arrives when the
        // holder unlocks); give up on it only when the run stops.
        std::size_t got = 0;
        while (got < msg.size() && phase.load(std::memory_order_relaxed) != 2) {
          const ssize_t n = ::recv(pairs[w][1], buf, sizeof buf, MSG_DONTWAIT);
          if (n > 0) got += static_cast<std::size_t>(n);
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<stack::NetworkStackCounters> before;
  for (auto& st : stacks) before.push_back(st->snapshot());
  const std::int64_t start = stats::monotonic_ns();
  phase.store(1, std::memory_order_relaxed);
  std::this_thread::sleep_for(std::chrono::duration<double>(s.seconds));
  phase.store(2, std::memory_order_relaxed);
  const std::int64_t end = stats::monotonic_ns();
  for (auto& t : threads) t.join();
  RunResult r;
  r.wall_s = static_cast<double>(end - start) / 1e9;
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    stack::NetworkStackCounters d = stacks[i]->snapshot();
    // The counters around the measured window (the warm-up's taken off; the few sends made
    // after the stop flag are counted, a small excess).
    d.sends -= before[i].sends;
    d.sends_deferred -= before[i].sends_deferred;
    d.send_lock_contends -= before[i].send_lock_contends;
    d.pool_empty_sends -= before[i].pool_empty_sends;
    d.transmit_errors -= before[i].transmit_errors;
    d.lock.lock_sleeps -= before[i].lock.lock_sleeps;
    d.lock.lock_wakes -= before[i].lock.lock_wakes;
    d.lock.lock_handoffs -= before[i].lock.lock_handoffs;
    d.lock.lock_contends -= before[i].lock.lock_contends;
    add_counters(r.totals, d);
  }
  for (unsigned w = 0; w < s.workers; ++w) {
    r.sends += sends[w];
    r.latency_us.insert(r.latency_us.end(), lat[w].begin(), lat[w].end());
  }
  for (auto& p : pairs) {
    ::close(p[0]);
    ::close(p[1]);
  }
  return r;
}

// The send latencies' percentiles ("send_latency_us_p50", "_p99", "_max", as the report's
// columns are named) and each counter per send: of all rounds pooled (the report's figures),
// or of one round (its "per_round" values, which the harness pairs round by round).
std::vector<std::pair<std::string, double>> pooled_figures(const std::vector<double>& latency_us,
                                                           const stack::NetworkStackCounters& totals) {
  const double n = std::max<double>(1.0, static_cast<double>(totals.sends));
  const double max = latency_us.empty() ? 0 : *std::max_element(latency_us.begin(), latency_us.end());
  return {{"send_latency_us_p50", handoff::probes::percentile(latency_us, 0.50)},
          {"send_latency_us_p99", handoff::probes::percentile(latency_us, 0.99)},
          {"send_latency_us_max", max},
          {"lock_contends_per_send", static_cast<double>(totals.send_lock_contends) / n},
          {"deferred_per_send", static_cast<double>(totals.sends_deferred) / n},
          {"pool_empty_per_send", static_cast<double>(totals.pool_empty_sends) / n},
          {"lock_sleeps_per_send", static_cast<double>(totals.lock.lock_sleeps) / n},
          {"lock_wakes_per_send", static_cast<double>(totals.lock.lock_wakes) / n},
          {"handoffs_per_send", static_cast<double>(totals.lock.lock_handoffs) / n}};
}

struct Tally {
  std::vector<double> rate, latency_us;
  std::uint64_t sends = 0;
  stack::NetworkStackCounters totals;
  Json per_round = Json::object();  // {figure: [its value in each round]}, pooled_figures of one round
};

Json result_of(const std::string& arm, Tally& t) {
  const auto f = pooled_figures(t.latency_us, t.totals);
  auto at = [&](std::size_t i) { return f[i].second; };
  return Json{{"arm", arm},
              {"sends", t.sends},
              {"sends_per_s", handoff::probes::median_min_max(t.rate)},
              {"send_latency_us", Json{{"p50", at(0)}, {"p99", at(1)}, {"max", at(2)}}},
              {"lock_contends_per_send", at(3)},
              {"deferred_per_send", at(4)},
              {"pool_empty_per_send", at(5)},
              {"lock_sleeps_per_send", at(6)},
              {"lock_wakes_per_send", at(7)},
              {"handoffs_per_send", at(8)},
              {"transmit_errors", t.totals.transmit_errors},
              {"per_round", t.per_round}};
}

// --check FILE: the smoke test's judge. The shape (each arm once, each with sends and
// latencies), and what an arm cannot have: the per-worker arm never contends or defers (no
// stack is shared), and only the hand-off arm hands off. Costs are reported, never asserted.
void judge(const Json& doc, std::vector<std::string>& problems) {
  for (const std::string& arm : kArms) {
    const Json* one = handoff::probes::the_one(doc["results"], arm, handoff::probes::named("arm", arm), problems);
    if (one == nullptr) continue;
    const Json& r = *one;
    if (r.value("sends", 0ULL) == 0) problems.push_back(arm + ": no sends");
    if (!r.contains("send_latency_us") || !(r["send_latency_us"].value("max", 0.0) > 0)) {
      problems.push_back(arm + ": no send latency");
    }
    if (arm == "per-worker" &&
        (r.value("lock_contends_per_send", -1.0) != 0.0 || r.value("deferred_per_send", -1.0) != 0.0)) {
      problems.push_back(arm + ": a stack per worker contended or deferred");
    }
    if (arm != "shared-handoff" && r.value("handoffs_per_send", -1.0) != 0.0) {
      problems.push_back(arm + ": hand-offs without the hand-off variant");
    }
  }
}

void print_table(const Json& doc) {
  handoff::probes::print_columns(doc, 17,
                                 {{"sends/s", 10, 0, "sends_per_s", "median"},
                                  {"p50 us", 9, 2, "send_latency_us", "p50"},
                                  {"p99 us", 9, 2, "send_latency_us", "p99"},
                                  {"max us", 10, 1, "send_latency_us", "max"},
                                  {"contend/op", 10, 4, "lock_contends_per_send", ""},
                                  {"defer/op", 9, 4, "deferred_per_send", ""},
                                  {"empty/op", 9, 4, "pool_empty_per_send", ""},
                                  {"sleep/op", 9, 4, "lock_sleeps_per_send", ""},
                                  {"wake/op", 9, 4, "lock_wakes_per_send", ""}});
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{
      kTool,
      "stack-lock-probe: W spinning workers sending through one shared stack lock, one each, with hand-off, with a "
      "long buzz"};
  handoff::config::CommandLine& cli = probe.cli();
  Settings s;
  std::vector<std::string> arms = kArms;
  cli.add_option("--workers", s.workers, "Worker threads")->range(1u, 64u);
  cli.add_option("--seconds", s.seconds, "Measured seconds per arm per round")->range(0.01, 600.0);
  cli.add_option("--rounds", s.rounds, "Rounds; arms alternate, reversed every other round")->range(1u, 1000u);
  cli.add_option("--buzz-us", s.buzz_us, "The shared arms' buzz (-1: for ever)")->range(-1, 10'000'000);
  cli.add_option("--long-buzz-us", s.long_buzz_us, "shared-buzz-long's buzz")->range(-1, 10'000'000);
  cli.add_option("--handoff-us", s.handoff_us, "shared-handoff's bound")->range(1, 10'000'000);
  cli.add_option("--free-pool", s.free_pool, "Packet buffers in the lock-free pool at the start")->range(0u, 256u);
  cli.add_option("--refill", s.refill, "Buffers one refill moves")->range(1u, 256u);
  cli.add_option("--bytes", s.bytes, "Bytes per send")->range(1u, 4096u);
  cli.add_option("--arms", arms, "Arms to run")->one_of(kArms)->delimiter(',');
  probe.add_report_flags(
      "each arm once with sends, the per-worker arm never contending nor deferring, hand-offs only in the hand-off "
      "arm");
  if (const auto status =
          probe.parse(argc, argv, true, "lists the four arms; the per-worker arm never contended", judge))
    return *status;

  std::vector<Tally> tallies(arms.size());
  handoff::probes::alternate_arms(s.rounds, arms.size(), [&](unsigned round, std::size_t k) {
    RunResult r = run_arm(s, arms[k]);
    Tally& t = tallies[k];
    t.rate.push_back(r.wall_s > 0 ? static_cast<double>(r.sends) / r.wall_s : 0.0);
    t.sends += r.sends;
    t.latency_us.insert(t.latency_us.end(), r.latency_us.begin(), r.latency_us.end());
    add_counters(t.totals, r.totals);
    for (const auto& [name, value] : pooled_figures(r.latency_us, r.totals)) t.per_round[name].push_back(value);
    std::fprintf(stderr, "round %u/%u %-17s %9.0f sends/s, %llu pool-empty, %llu sleeps\n", round + 1, s.rounds,
                 arms[k].c_str(), t.rate.back(), static_cast<unsigned long long>(r.totals.pool_empty_sends),
                 static_cast<unsigned long long>(r.totals.lock.lock_sleeps));
  });
  Json results = Json::array();
  for (std::size_t k = 0; k < arms.size(); ++k) results.push_back(result_of(arms[k], tallies[k]));
  return probe.report(Json{{"settings", Json{{"workers", s.workers},
                                             {"seconds", s.seconds},
                                             {"rounds", s.rounds},
                                             {"buzz_us", s.buzz_us},
                                             {"long_buzz_us", s.long_buzz_us},
                                             {"handoff_us", s.handoff_us},
                                             {"free_pool", s.free_pool},
                                             {"refill", s.refill},
                                             {"bytes", s.bytes},
                                             {"arms", arms}}},
                           {"results", std::move(results)}},
                      print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
