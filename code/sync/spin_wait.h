// sync/spin_wait: poll for a condition for a bounded time before giving up (chapter 02).
// Role: the "spin" of spin-then-park. A hand-off whose next item usually arrives within a
// few microseconds catches it here, with no syscall on either side; only a longer gap
// pays for a park and a wake.
#pragma once

#include <cstdint>
#include <thread>

#include "stats/thread_cpu.h"
#include "stats/thread_stats.h"

namespace handoff::sync {

/// How long to spin, and when to start yielding the core instead of pausing on it.
struct SpinPolicy {
  std::int64_t spin_ns = 10'000;        ///< total budget; 0 disables spinning
  std::int64_t yield_after_ns = 2'000;  ///< past this, each miss yields the core
};

/// A pause hint: tells the core this is a spin loop (cheaper for the sibling hyperthread,
/// and no memory-order mis-speculation penalty on exit). Orders nothing.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// Call `try_once` until it returns true or the budget is spent. Returns whether it caught.
/// The cost is CPU: up to spin_ns per call, on the clock of the spinning thread, and one
/// sched_yield per miss past yield_after_ns, counted as a syscall in `counts` if given.
template <class TryOnce>
bool spin_until(const SpinPolicy& policy, TryOnce&& try_once, stats::ThreadStats* counts = nullptr) {
  if (policy.spin_ns <= 0) return false;
  const std::int64_t start = stats::monotonic_ns();
  for (;;) {
    if (try_once()) return true;
    const std::int64_t elapsed = stats::monotonic_ns() - start;
    if (elapsed >= policy.spin_ns) return false;
    if (elapsed >= policy.yield_after_ns) {
      std::this_thread::yield();
      if (counts != nullptr) counts->add(stats::Counter::syscalls);
    } else {
      cpu_relax();
    }
  }
}

}  // namespace handoff::sync
