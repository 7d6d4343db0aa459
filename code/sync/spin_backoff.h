// sync/spin_backoff: skip an idle spin that keeps missing, and try again later (chapter 04).
// Role: the "when not to spin" beside sync/spin_wait's "how long". An idle spin pays when
// the next item comes within its budget; when the other side is slower than that, every
// spin is CPU burnt before the park that follows anyway. After a miss this skips the next
// spin, after two misses in a row the next three, then seven, up to 2^kMaxMissLog2 - 1,
// and one catch ends the backoff. Chapter 04's executor round trip measures both sides of
// it: the CPU a missing spin burns, and the wake a skipped spin makes the next item pay.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace handoff::sync {

/// The backoff of one spinner role (a pool lane's idle spinner). Meant for the one thread
/// that holds the role at a time; its counters are atomics only so that the role may pass
/// between threads without a data race (relaxed: a stale count costs a spin more or less).
class SpinBackoff {
 public:
  /// After this many misses in a row, 2^kMaxMissLog2 - 1 idle periods are skipped between
  /// two spins: 63 here, so that a spinner that caught nothing in a long while tries again
  /// within 64 jobs.
  static constexpr std::uint32_t kMaxMissLog2 = 6;

  /// Whether this idle period skips its spin (and parks at once). Counts the skip down.
  bool skip() noexcept {
    const std::uint32_t left = skip_left_.load(std::memory_order_relaxed);
    if (left == 0) return false;
    skip_left_.store(left - 1, std::memory_order_relaxed);
    skipped_.store(skipped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // one holder
    return true;
  }
  /// The spin that was not skipped caught its item (true) or ran out (false).
  void record(bool caught) noexcept {
    if (caught) {
      misses_.store(0, std::memory_order_relaxed);
      return;
    }
    const std::uint32_t m = std::min(misses_.load(std::memory_order_relaxed) + 1, kMaxMissLog2);
    misses_.store(m, std::memory_order_relaxed);
    skip_left_.store((1u << m) - 1, std::memory_order_relaxed);
  }
  /// Spins skipped so far (for tests and the harness; read when the role is idle).
  std::uint64_t skipped() const noexcept { return skipped_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint32_t> misses_{0};     // misses in a row, at most kMaxMissLog2
  std::atomic<std::uint32_t> skip_left_{0};  // idle periods still to skip
  std::atomic<std::uint64_t> skipped_{0};
};

}  // namespace handoff::sync
