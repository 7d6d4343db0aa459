// probes/interpreter_model: what gil-spin and pool-churn share (chapter 04, seed 003).
#include "interpreter_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include "stats/thread_cpu.h"
#include "sync/spin_wait.h"

namespace handoff::probes {

namespace {
constexpr std::int64_t kUnitNs = 1'000;  // interpreted work between two checkpoints
}  // namespace

void interpreted(sync::InterpreterLock& lock, std::int64_t ns, std::vector<std::int64_t>* waits) {
  for (std::int64_t done = 0; done < ns; done += kUnitNs) {
    const std::int64_t end = stats::monotonic_ns() + kUnitNs;
    while (stats::monotonic_ns() < end) sync::cpu_relax();
    const std::optional<std::int64_t> w = lock.checkpoint();
    if (w && waits != nullptr) waits->push_back(*w);
  }
}

void add_interpreted_work_flags(config::CommandLine& cli, InterpretedWork& work, const std::string& role,
                                unsigned least_us, const std::string& callback_when) {
  const std::string a = "A " + role + "'s interpreted work ";
  cli.add_option("--work-us", work.work_us, a + "before it posts, lock held")->range(least_us, 100'000u);
  cli.add_option("--after-post-us", work.after_post_us, a + "after it posts, before it releases the lock for its wait")
      ->range(0u, 100'000u);
  cli.add_option("--callback-us", work.callback_us, "The loop's interpreted work " + callback_when)
      ->range(least_us, 100'000u);
}

Json interpreted_work_settings(const InterpretedWork& work) {
  return Json{{"work_us", work.work_us}, {"after_post_us", work.after_post_us}, {"callback_us", work.callback_us}};
}

void add_lock_arm_flags(config::CommandLine& cli, LockArms& arms) {
  cli.add_option("--switch-interval-us", arms.switch_interval_us,
                 "The lock's switch interval (CPython: sys.getswitchinterval(), 5 ms)")
      ->range(1u, 1'000'000u);
  cli.add_option("--spin-us", arms.spins, "Loop wake spins to run (default 0,50)")->range(0u, 100'000u)->delimiter(',');
  cli.add_option("--lock", arms.locks, "Arms with the lock model (on) and without it (off)")
      ->one_of({"on", "off"})
      ->delimiter(',');
}

Json lock_arms_settings(const LockArms& arms) {
  return Json{{"switch_interval_us", arms.switch_interval_us}, {"spin_us", arms.spins}, {"lock", arms.locks}};
}

sync::InterpreterLockOptions lock_options(const LockArms& arms, bool lock) {
  sync::InterpreterLockOptions o;
  o.switch_interval = std::chrono::microseconds(arms.switch_interval_us);
  o.enabled = lock;
  return o;
}

double per(double n, std::uint64_t d) { return d > 0 ? n / static_cast<double>(d) : 0.0; }

Json lock_waits(const std::vector<double>& us) {
  return Json{
      {"p50", percentile(us, 0.50)}, {"p99", percentile(us, 0.99)}, {"max", percentile(us, 1.0)}, {"takes", us.size()}};
}

Json per_turn(const std::vector<double>& completions) {
  double sum = 0;
  for (const double n : completions) sum += n;
  return Json{{"mean", completions.empty() ? 0.0 : sum / static_cast<double>(completions.size())},
              {"p50", percentile(completions, 0.50)},
              {"p99", percentile(completions, 0.99)},
              {"max", percentile(completions, 1.0)},
              {"turns", completions.size()}};
}

namespace {
// Each figure of one run's distribution `one` (not its count, "takes" or "turns") appended to
// per_round["FIGURE_KEY"].
void append_round(Json& per_round, const std::string& figure, const Json& one) {
  for (const auto& [key, value] : one.items()) {
    if (key != "takes" && key != "turns") per_round[figure + "_" + key].push_back(value);
  }
}
}  // namespace

void LoopTally::add(std::uint64_t completions, double wall_s, std::int64_t loop_cpu_ns,
                    const std::vector<std::int64_t>& waits_ns, const std::vector<std::uint32_t>& turns) {
  per_s.push_back(wall_s > 0 ? static_cast<double>(completions) / wall_s : 0.0);
  cpu_us.push_back(per(static_cast<double>(loop_cpu_ns) / 1e3, completions));
  std::vector<double> run_waits_us, run_per_turn;
  for (const std::int64_t w : waits_ns) run_waits_us.push_back(static_cast<double>(w) / 1e3);
  for (const std::uint32_t n : turns) run_per_turn.push_back(n);
  append_round(per_round, "loop_lock_wait_us", lock_waits(run_waits_us));
  append_round(per_round, "completions_per_turn", probes::per_turn(run_per_turn));
  loop_wait_us.insert(loop_wait_us.end(), run_waits_us.begin(), run_waits_us.end());
  per_turn.insert(per_turn.end(), run_per_turn.begin(), run_per_turn.end());
  last_per_turn = per(static_cast<double>(completions), turns.size());
}

void say_round(unsigned round, unsigned rounds, const std::string& arm, const char* unit, const LoopTally& t,
               const std::string& more) {
  std::fprintf(stderr, "round %u/%u %-24s %8.0f %s/s, loop %6.2f us CPU each, %.2f per turn%s\n", round + 1, rounds,
               arm.c_str(), t.per_s.empty() ? 0.0 : t.per_s.back(), unit, t.cpu_us.empty() ? 0.0 : t.cpu_us.back(),
               t.last_per_turn, more.c_str());
}

void judge_loop_distributions(const Json& r, const std::string& where, bool lock, std::vector<std::string>& problems) {
  for (const char* k : {"loop_lock_wait_us", "completions_per_turn"}) {
    if (!r.contains(k) || !r[k].is_object()) problems.push_back(where + ": no " + k + " object");
  }
  if (!lock && r.contains("loop_lock_wait_us") && r["loop_lock_wait_us"].is_object() &&
      r["loop_lock_wait_us"].value("max", -1.0) != 0.0) {
    problems.push_back(where + ": the loop waited for a lock that is a no-op");
  }
}

}  // namespace handoff::probes
