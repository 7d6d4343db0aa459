// sync/interpreter_lock: a model of CPython's global interpreter lock (chapter 04).
// Role: take, drop and the eval-breaker check, with the switch interval, the drop request
// and forced switching, under one mutex.
#include "sync/interpreter_lock.h"

#include <algorithm>
#include <stdexcept>

#include "stats/thread_cpu.h"

namespace handoff::sync {

InterpreterLock::InterpreterLock(InterpreterLockOptions options) : options_(options) {
  if (options_.switch_interval <= std::chrono::nanoseconds::zero()) {
    throw std::invalid_argument("InterpreterLock: the switch interval must be positive");
  }
}

// [gil.take]
std::int64_t InterpreterLock::acquire() {
  if (!options_.enabled) return 0;
  const std::thread::id me = std::this_thread::get_id();
  std::unique_lock lk(mu_);
  if (locked_ && holder_ == me) throw std::logic_error("InterpreterLock: acquire by its holder");
  std::int64_t waited = 0;
  if (locked_) {
    const std::int64_t start = stats::monotonic_ns();
    while (locked_) {
      const std::uint64_t saved_switch = switch_number_;
      const bool timed_out = cond_.wait_for(lk, options_.switch_interval) == std::cv_status::timeout;
      // A whole interval passed with the lock held and no other thread taking it: ask the
      // holder to drop it at its next checkpoint. A switch to a third thread meanwhile
      // restarts the clock instead (that holder has had the lock less than an interval).
      if (timed_out && locked_ && switch_number_ == saved_switch) {
        // relaxed: a hint the holder polls at its checkpoints (a late read costs it one
        // more checkpoint); the hand-off itself is ordered by mu_.
        drop_request_.store(true, std::memory_order_relaxed);
        ++counters_.drop_requests;
      }
    }
    waited = stats::monotonic_ns() - start;
    ++counters_.waits;
    counters_.wait_ns_total += waited;
    counters_.wait_ns_max = std::max(counters_.wait_ns_max, waited);
  }
  // [gil.take]
  // [gil.taken]
  locked_ = true;
  holder_ = me;
  ++counters_.acquisitions;
  if (last_holder_ != me) {
    last_holder_ = me;
    ++switch_number_;
    ++counters_.switches;
    switch_cond_.notify_all();  // a forced-switch dropper waits for exactly this
  }
  // Whoever takes the lock clears a pending request, whoever set it: the switch it asked
  // for has happened (CPython does the same; a waiter still left out asks again after its
  // next interval).
  drop_request_.store(false, std::memory_order_relaxed);  // relaxed: as the store above
  return waited;
}
// [gil.taken]

void InterpreterLock::release() {
  if (!options_.enabled) return;
  const std::thread::id me = std::this_thread::get_id();
  std::unique_lock lk(mu_);
  if (!locked_ || holder_ != me) throw std::logic_error("InterpreterLock: release by a thread that does not hold it");
  locked_ = false;
  holder_ = std::thread::id{};
  cond_.notify_one();  // one waiter wakes to race for it; a thread arriving now may win
  // relaxed: read under mu_, which every store of it holds. (CPython also checks that it is
  // still the last holder, as it looks after releasing its mutex; under one mutex it is.)
  if (options_.forced_switching && drop_request_.load(std::memory_order_relaxed)) {
    // Asked to drop: do not come back for the lock before someone else has had it.
    drop_request_.store(false, std::memory_order_relaxed);  // relaxed: as in acquire()
    ++counters_.forced_switches;
    switch_cond_.wait(lk, [&] { return last_holder_ != me; });
  }
}

std::optional<std::int64_t> InterpreterLock::checkpoint() {
  // relaxed: the eval breaker's poll; a request seen one checkpoint late is still honoured.
  if (!options_.enabled || !drop_request_.load(std::memory_order_relaxed)) return std::nullopt;
  release();
  return acquire();
}

bool InterpreterLock::drop_requested() const noexcept {
  return drop_request_.load(std::memory_order_relaxed);  // relaxed: a snapshot
}

bool InterpreterLock::held_by_me() const {
  std::lock_guard lk(mu_);
  return locked_ && holder_ == std::this_thread::get_id();
}

InterpreterLockCounters InterpreterLock::counters() const {
  std::lock_guard lk(mu_);
  return counters_;
}

}  // namespace handoff::sync
