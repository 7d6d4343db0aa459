// stack/stack_lock: a model of a user-level network stack's lock, after Onload's (chapter 05).
// Role: the composition of the three steps (stack/stack_lock.h says which file holds which):
// the word's CASes decide, the sleeper buzzes, sleeps and wakes, the deferred list holds
// and runs the work left for the holder.
#include "stack/stack_lock.h"

namespace handoff::stack {

StackLock::StackLock(StackLockOptions options, StackLockSeams seams) : options_(options), seams_(seams) {}

bool StackLock::try_lock() noexcept {
  std::uint32_t w = word_.look();  // a guess for the CAS, which orders (LockWord::try_take)
  if (!word_.try_take(w, 0)) return false;
  count(locks_);
  return true;
}

// [stack_lock.lock]
LockResult StackLock::lock() noexcept {
  std::uint32_t w = word_.look();  // a guess for the CAS, which orders (LockWord::try_take)
  if (word_.try_take(w, 0)) {
    count(locks_);
    return {};
  }
  return lock_slow();
}

LockResult StackLock::lock_slow() noexcept {
  LockResult result;
  result.contended = true;
  count(lock_contends_);
  // Buzz (try-lock on our core, no syscall) for buzz_ns, then sleep (stack/lock_sleeper.h).
  if (LockSleeper<>::buzz(word_, options_.buzz_ns)) {
    count(lock_buzz_catches_);
    count(locks_);
    return result;
  }
  const auto at = [this](StackLockPoint p) { this->at(p); };
  result.handed = sleeper_.sleep(word_, options_.handoff_after_ns, seams_.handoff_take_by_exchange, result.sleeps, at);
  if (!result.handed) count(locks_);  // a hand-off counts it at handoff_received
  return result;
}
// [stack_lock.lock]

// The sleeper's points, each with the counter that moves there (before the hook, so a test
// stopped at the point sees it counted).
void StackLock::at(StackLockPoint p) noexcept {
  switch (p) {
    case StackLockPoint::handoff_requested:
      count(handoff_requests_);
      break;
    case StackLockPoint::handoff_received:
      count(locks_);
      break;
    case StackLockPoint::woken:
      count(lock_sleeps_);
      break;
    default:
      break;
  }
  hook(p);
}

// [stack_lock.unlock]
UnlockResult StackLock::unlock() noexcept {
  UnlockResult result;
  std::uint32_t w = word_.look();  // a guess for the CASes, which order (LockWord::release_step)
  const auto before_release = [this] {
    if (options_.before_release != nullptr) options_.before_release(options_.before_release_context);
  };
  for (;;) {
    switch (word_.release_step(w, before_release, ReleaseBy::compare_exchange)) {
      case LockWord<>::Step::list_taken:  // run it here, under the lock (stack/deferred_list.h)
        result.deferred_run += deferred_.run((w & kHeadMask) >> kHeadShift, [this] { count(deferred_run_); });
        w = word_.look();  // a fresh guess; the step's CASes decide
        continue;
      case LockWord<>::Step::handoff_withdrawn:
        // Publish the token (a release store, stack/lock_sleeper.h) and wake the requester:
        // our critical section and the deferred work run above happen-before the new owner's.
        sleeper_.hand_over();
        count(lock_handoffs_);
        result.handed_off = true;
        return result;
      case LockWord<>::Step::released:
        hook(StackLockPoint::released);
        if ((w & kNeedWake) != 0) {
          // One sleeper, and nothing handed over: it re-reads the word and competes again.
          LockSleeper<>::wake_one(word_);
          count(lock_wakes_);
          result.woke = true;
        }
        return result;
    }
  }
}
// [stack_lock.unlock]

DeferOutcome StackLock::lock_or_defer(const DeferredWork& work, UnlockResult* unlocked) noexcept {
  switch (deferred_.push(word_, work)) {  // stack/deferred_list.h
    case DeferredList<>::Push::took_lock: {
      count(locks_);
      work.run(work.context, work.a, work.b);
      const UnlockResult r = unlock();
      if (unlocked != nullptr) *unlocked = r;
      return DeferOutcome::ran_here;
    }
    case DeferredList<>::Push::pushed:
      count(deferred_work_);
      return DeferOutcome::deferred;
    case DeferredList<>::Push::full:
      break;
  }
  // The list is full (or every slot is still being run): block on the lock instead.
  count(deferred_full_);
  hook(StackLockPoint::defer_full);
  lock();
  work.run(work.context, work.a, work.b);
  const UnlockResult r = unlock();
  if (unlocked != nullptr) *unlocked = r;
  return DeferOutcome::ran_after_wait;
}

bool StackLock::is_locked() const noexcept {
  return (word_.look() & kLocked) != 0;  // a snapshot
}

std::uint32_t StackLock::deferred_queued() const noexcept {
  return (word_.look() & kCountMask) >> kCountShift;  // a snapshot
}

StackLockCounters StackLock::counters() const noexcept {
  // relaxed throughout: statistics.
  StackLockCounters c;
  c.locks = locks_.load(std::memory_order_relaxed);
  c.lock_contends = lock_contends_.load(std::memory_order_relaxed);
  c.lock_buzz_catches = lock_buzz_catches_.load(std::memory_order_relaxed);
  c.lock_sleeps = lock_sleeps_.load(std::memory_order_relaxed);
  c.lock_wakes = lock_wakes_.load(std::memory_order_relaxed);
  c.deferred_work = deferred_work_.load(std::memory_order_relaxed);
  c.deferred_run = deferred_run_.load(std::memory_order_relaxed);
  c.deferred_full = deferred_full_.load(std::memory_order_relaxed);
  c.handoff_requests = handoff_requests_.load(std::memory_order_relaxed);
  c.lock_handoffs = lock_handoffs_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace handoff::stack
