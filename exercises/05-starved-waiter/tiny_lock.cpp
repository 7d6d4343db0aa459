// exercises/05-starved-waiter: the given part of the cut-down stack lock (all but unlock()).
#include <climits>

#include "tiny_lock.h"

namespace exercise {

void TinyLock::wake_one() noexcept { futex_.wake(word_, 1); }

void TinyLock::wake_all() noexcept { futex_.wake(word_, INT_MAX); }

bool TinyLock::try_lock() noexcept {
  std::uint32_t was = 0;
  return try_lock(was);
}

bool TinyLock::try_lock(std::uint32_t& was) noexcept {
  // relaxed: a guess for the CAS. acquire on success: pairs with unlock()'s release CAS.
  was = word_.load(std::memory_order_relaxed);
  if ((was & kLocked) != 0) return false;
  return word_.compare_exchange_strong(was, was | kLocked, std::memory_order_acquire, std::memory_order_relaxed);
}

TinyLockResult TinyLock::lock() noexcept {
  if (try_lock()) return {};
  return lock_slow();
}

TinyLockResult TinyLock::lock_slow() noexcept {
  TinyLockResult result;
  std::int64_t first_sleep_ns = 0;
  bool requested = false;  // we set HANDOFF_WANTED and have not yet seen it served or dropped
  for (;;) {
    // relaxed: every decision below is made by a CAS on this value, which orders.
    std::uint32_t w = word_.load(std::memory_order_relaxed);
    if (requested) {
      if ((w & kHanded) != 0) {
        // Take what the unlock handed over. LOCKED is still set: nobody else got in.
        // acquire: pairs with the hand-off's release CAS in unlock().
        if (word_.compare_exchange_strong(w, w & ~kHanded, std::memory_order_acquire, std::memory_order_relaxed)) {
          result.handed = true;
          return result;
        }
        continue;
      }
      if ((w & kHandoffWanted) != 0) {  // still asked for (by us, or by another requester)
        // No timeout: LOCKED is set and HANDED is not, so the owner's unlock will hand over,
        // and its wake_all() comes after the change that makes this wait return.
        futex_.wait(word_, w, 0);
        ++result.sleeps;
        hook(TinyLockPoint::woken);
        continue;
      }
      requested = false;  // an unlock withdrew the request without handing over: compete again
      continue;
    }
    if ((w & kLocked) == 0) {
      // A thread that has slept takes the lock with NEED_WAKE set: other sleepers may remain.
      if (word_.compare_exchange_strong(w, w | kLocked | (result.sleeps > 0 ? kNeedWake : 0U),
                                        std::memory_order_acquire, std::memory_order_relaxed)) {
        return result;
      }
      continue;
    }
    if (handoff_after_ns_ > 0 && result.sleeps > 0 && (w & kHandoffWanted) == 0 &&
        Clock::now_ns() - first_sleep_ns >= handoff_after_ns_) {
      // relaxed: a request, not a publication; the CAS's winner owns it.
      const std::uint32_t asked = w | kHandoffWanted | kNeedWake;
      if (word_.compare_exchange_strong(w, asked, std::memory_order_relaxed, std::memory_order_relaxed)) {
        requested = true;
        handoff_requests_.fetch_add(1, std::memory_order_relaxed);
        hook(TinyLockPoint::handoff_requested);
      }
      // The sleep is the requester's branch above, never here: `asked` may hold a HANDED
      // meant for an earlier requester, and a thread asleep on a word with HANDED in it can
      // miss its wake for good (the hand-off's wake came before; the word can come back to
      // the same value). A requester sleeps only on a word with the lock owned and a request
      // in it: that owner's unlock must hand over, which changes the word and wakes it.
      continue;
    }
    if ((w & kNeedWake) == 0) {
      if (!word_.compare_exchange_strong(w, w | kNeedWake, std::memory_order_relaxed, std::memory_order_relaxed)) {
        continue;
      }
      w |= kNeedWake;
    }
    if (first_sleep_ns == 0) first_sleep_ns = Clock::now_ns();
    std::int64_t timeout_ns = 0;
    if (handoff_after_ns_ > 0 && (w & kHandoffWanted) == 0) {
      // Sleep no longer than the rest of the bound, so the request goes in on time (with a
      // request already in the word there is nothing to ask for until its hand-off wakes us).
      timeout_ns = handoff_after_ns_ - (Clock::now_ns() - first_sleep_ns);
      if (timeout_ns <= 0) timeout_ns = 1;
    }
    hook(TinyLockPoint::before_sleep);
    futex_.wait(word_, w, timeout_ns);
    ++result.sleeps;
    hook(TinyLockPoint::woken);
  }
}

}  // namespace exercise
