// stack/stack_lock: a model of a user-level network stack's lock, after Onload's (chapter 05).
#include "stack/stack_lock.h"

#include "stats/thread_cpu.h"
#include "sync/futex.h"
#include "sync/spin_wait.h"

namespace handoff::stack {

// The futex calls (sync/futex). A wake may run after the lock word has been released and
// even reused by another holder: one that finds nobody waiting is harmless, and a stray wake
// is one that every waiter's loop already tolerates. The object must outlive every thread
// that uses it, as for any lock.
using sync::futex_wait;
using sync::futex_wake_one;

StackLock::StackLock(StackLockOptions options) : options_(options) {}

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

  // Buzz: try-lock on our core, no syscall, for buzz_ns (for ever when -1).
  if (options_.buzz_ns != 0) {
    const std::int64_t start = stats::monotonic_ns();
    for (;;) {
      std::uint32_t w = word_.look();  // a look before the CAS, which orders
      if (word_.try_take(w, 0)) {
        count(lock_buzz_catches_);
        count(locks_);
        return result;
      }
      if (options_.buzz_ns > 0 && stats::monotonic_ns() - start >= options_.buzz_ns) break;
      sync::cpu_relax();
    }
  }
  // [stack_lock.lock]

  // [stack_lock.sleep]
  // Sleep: flag NEED_WAKE in the word, FUTEX_WAIT on it as flagged (LockWord::take_or_flag).
  std::int64_t first_sleep_ns = 0;
  const auto starved = [&] {
    return options_.handoff_after_ns > 0 && result.sleeps > 0 &&
           stats::monotonic_ns() - first_sleep_ns >= options_.handoff_after_ns;
  };
  for (;;) {
    std::uint32_t w = 0;
    // A thread that has slept takes the lock with NEED_WAKE set: other sleepers may remain,
    // and the unlock cleared the only record of them. The price is at most one FUTEX_WAKE
    // that finds nobody (glibc's low-level lock does the same).
    const auto look = word_.take_or_flag(w, result.sleeps > 0 ? kNeedWake : 0, starved);
    if (look == LockWord<>::Look::took) {
      count(locks_);
      return result;
    }
    if (look == LockWord<>::Look::handoff_requested) {
      count(handoff_requests_);
      hook(StackLockPoint::handoff_requested);
      wait_for_handoff();
      result.handed = true;
      count(locks_);
      hook(StackLockPoint::handoff_received);
      return result;
    }
    if (first_sleep_ns == 0) first_sleep_ns = stats::monotonic_ns();
    std::int64_t timeout_ns = 0;  // none
    if (options_.handoff_after_ns > 0 && (w & kHandoffWanted) == 0) {
      // Sleep no longer than the rest of the bound, so the request goes in on time even if
      // no unlock wakes us first.
      timeout_ns = options_.handoff_after_ns - (stats::monotonic_ns() - first_sleep_ns);
      if (timeout_ns <= 0) timeout_ns = 1;
    }
    hook(StackLockPoint::before_sleep);
    futex_wait(word_.atom(), w, timeout_ns);
    ++result.sleeps;
    count(lock_sleeps_);
    hook(StackLockPoint::woken);
  }
}
// [stack_lock.sleep]

void StackLock::wait_for_handoff() noexcept {
  for (;;) {
    // The token is taken by an exchange, not a load and a store: two threads can be here for
    // one token. Once an unlock has withdrawn requester A's HANDOFF_WANTED and published the
    // token, B (a second sleeper past the bound) may set HANDOFF_WANTED again and arrive
    // here before A wakes; with a load and a store both could read 1 and both own the lock
    // (the exclusion stress caught exactly that under TSan's timing). With the exchange one
    // of them takes it and the other waits on; B's request is still in the word, so the next
    // unlock hands the lock to the one left. At most one token is ever outstanding: only an
    // owner publishes one, and until it is taken the lock has no owner to publish another.
    // acquire: pairs with the release store of 1 in unlock()'s hand-off: the previous
    // holder's critical section and the deferred work it ran happen-before ours.
    hook(StackLockPoint::handoff_wait);
    if (options_.handoff_take_by_exchange) {
      const std::uint32_t token = handoff_.exchange(0, std::memory_order_acquire);
      hook(StackLockPoint::handoff_token_read);
      if (token == 1) return;
    } else {
      // The broken take, kept for the test that shows why it is broken (negative control).
      // acquire: as above; relaxed store: the bug is the gap between the two, not an order.
      const std::uint32_t token = handoff_.load(std::memory_order_acquire);
      hook(StackLockPoint::handoff_token_read);
      if (token == 1) {
        handoff_.store(0, std::memory_order_relaxed);
        return;
      }
    }
    hook(StackLockPoint::handoff_sleep);
    futex_wait(handoff_, 0, 0);
  }
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
      case LockWord<>::Step::list_taken:
        result.deferred_run += run_list((w & kHeadMask) >> kHeadShift);
        w = word_.look();  // a fresh guess; the step's CASes decide
        continue;
      case LockWord<>::Step::handoff_withdrawn:
        // release: pairs with wait_for_handoff()'s acquire load: our critical section and
        // the deferred work run above happen-before the new owner's.
        handoff_.store(1, std::memory_order_release);
        futex_wake_one(handoff_);
        count(lock_handoffs_);
        result.handed_off = true;
        return result;
      case LockWord<>::Step::released:
        hook(StackLockPoint::released);
        if ((w & kNeedWake) != 0) {
          // One sleeper, and nothing handed over: it re-reads the word and competes again.
          futex_wake_one(word_.atom());
          count(lock_wakes_);
          result.woke = true;
        }
        return result;
    }
  }
}
// [stack_lock.unlock]

std::uint32_t StackLock::run_list(std::uint32_t head) noexcept {
  // The list is LIFO (each push goes on top); run it in the order it was pushed.
  std::uint32_t order[kSlots];
  std::uint32_t n = 0;
  for (std::uint32_t at = head; at != 0 && n < kSlots; at = slots_[at - 1].next) order[n++] = at - 1;
  for (std::uint32_t i = n; i-- > 0;) {
    const DeferredWork work = slots_[order[i]].work;
    free_slot(order[i]);
    work.run(work.context, work.a, work.b);
    count(deferred_run_);
  }
  return n;
}

int StackLock::claim_slot() noexcept {
  // relaxed: a guess for the CAS.
  std::uint64_t bits = slot_bits_.load(std::memory_order_relaxed);
  for (;;) {
    if (bits == ~std::uint64_t{0}) return -1;
    const int i = __builtin_ctzll(~bits);
    // acquire: pairs with free_slot()'s release: the holder's read of this slot (the item it
    // ran last) happens-before our writes to it.
    if (slot_bits_.compare_exchange_weak(bits, bits | (std::uint64_t{1} << i), std::memory_order_acquire,
                                         std::memory_order_relaxed)) {
      return i;
    }
  }
}

void StackLock::free_slot(std::uint32_t index) noexcept {
  // release: pairs with claim_slot()'s acquire (see there).
  slot_bits_.fetch_and(~(std::uint64_t{1} << index), std::memory_order_release);
}

static_assert(2 * StackLock::kDeferLimit <= 64, "slot bitmap is one 64-bit word");
static_assert(2 * StackLock::kDeferLimit < 255, "slot index + 1 fits the word's 8 head bits");

DeferOutcome StackLock::lock_or_defer(const DeferredWork& work, UnlockResult* unlocked) noexcept {
  std::uint32_t w = word_.look();  // a guess for the CASes, which order
  int slot = -1;
  for (;;) {
    if ((w & kLocked) == 0) {
      if (word_.try_take(w, 0)) {
        if (slot >= 0) free_slot(static_cast<std::uint32_t>(slot));
        count(locks_);
        work.run(work.context, work.a, work.b);
        const UnlockResult r = unlock();
        if (unlocked != nullptr) *unlocked = r;
        return DeferOutcome::ran_here;
      }
      continue;
    }
    const std::uint32_t queued = (w & kCountMask) >> kCountShift;
    if (queued >= kDeferLimit) break;
    if (slot < 0) {
      slot = claim_slot();
      if (slot < 0) break;
      slots_[slot].work = work;
    }
    slots_[slot].next = (w & kHeadMask) >> kHeadShift;
    const std::uint32_t pushed = (w & ~(kHeadMask | kCountMask)) |
                                 (static_cast<std::uint32_t>(slot + 1) << kHeadShift) | ((queued + 1) << kCountShift);
    // The push's CAS (LockWord::push_deferred: release, and only onto a held word). No
    // ABA hazard, even though slots are reused: the list is only pushed onto, one item at a
    // time, and taken whole, never popped through a link. So the CAS depends on nothing but
    // the word's value: if the word still equals `w` (the holder may have taken the list
    // and a pusher refilled it in a freed slot with the same index meanwhile), its head is
    // the value our link holds and its count is the length of the list under that head,
    // whatever items those are now, and our push keeps both true.
    if (word_.push_deferred(w, pushed)) {
      count(deferred_work_);
      return DeferOutcome::deferred;
    }
  }
  // The list is full (or every slot is still being run): block on the lock instead.
  if (slot >= 0) free_slot(static_cast<std::uint32_t>(slot));
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
