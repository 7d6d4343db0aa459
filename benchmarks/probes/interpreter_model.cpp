// probes/interpreter_model: what gil-spin and pool-churn share (chapter 04, seed 003).
#include "interpreter_model.h"

#include <algorithm>
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

void add_lock_arm_flags(config::CommandLine& cli, LockArms& arms) {
  cli.add_option("--switch-interval-us", arms.switch_interval_us,
                 "The lock's switch interval (CPython: sys.getswitchinterval(), 5 ms)")
      ->range(1u, 1'000'000u);
  cli.add_option("--spin-us", arms.spins, "Loop wake spins to run (default 0,50)")->range(0u, 100'000u)->delimiter(',');
  cli.add_option("--lock", arms.locks, "Arms with the lock model (on) and without it (off)")
      ->one_of({"on", "off"})
      ->delimiter(',');
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

}  // namespace handoff::probes
