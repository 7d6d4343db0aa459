// exercises/05-starved-waiter/solution: release as Onload does, unless a waiter past the
// bound has asked; then keep LOCKED and hand the lock to it in the same CAS.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  // relaxed: a guess for the CASes, which order.
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & kHandoffWanted) != 0) {
      // The hand-off. LOCKED stays set, so a spinner's try_lock keeps failing from our
      // critical section to the requester's; the request is withdrawn and HANDED set in the
      // same step, so the next unlock (the requester's own) does not hand off again.
#if defined(HANDOFF_CLEARS_LOCKED)
      const std::uint32_t handed = (w & ~(kHandoffWanted | kLocked)) | kHanded;  // mutant: a spinner gets in
#elif defined(HANDOFF_KEEPS_REQUEST)
      const std::uint32_t handed = w | kHanded;  // mutant: the request stays, and is served again
#else
      const std::uint32_t handed = (w & ~kHandoffWanted) | kHanded;
#endif
      // release: pairs with the requester's acquire CAS that clears HANDED: our critical
      // section happens-before its own.
#if defined(UNLOCK_HANDOFF_RELAXED)
      constexpr auto handoff_order = std::memory_order_relaxed;  // mutant: hands the lock, not what it guarded
#else
      constexpr auto handoff_order = std::memory_order_release;
#endif
#if defined(HANDOFF_WAKE_FIRST)
      wake_all();  // mutant: a requester woken now still reads its request, and sleeps again
#endif
      if (word_.compare_exchange_weak(w, handed, handoff_order, std::memory_order_relaxed)) {
        // After the CAS, never before: the requester compares the word and sleeps in one
        // step, so this wake cannot reach it before HANDED is there to see. It sleeps on the
        // word among the other sleepers: wake them all; the others find LOCKED and sleep again.
#if !defined(HANDOFF_WAKE_FIRST)
        wake_all();
#endif
        handoffs_.fetch_add(1, std::memory_order_relaxed);
        result.handed_off = true;
        return result;
      }
      continue;
    }
    // Release, as Onload does: only from a word with no request in it (compared whole: a
    // request or a NEED_WAKE that lands after our load fails the CAS and we look again).
    // release: pairs with the next taker's acquire CAS.
#if defined(UNLOCK_RELEASE_RELAXED)
    constexpr auto release_order = std::memory_order_relaxed;  // mutant: frees the word, publishes nothing
#else
    constexpr auto release_order = std::memory_order_release;
#endif
    if (word_.compare_exchange_weak(w, 0, release_order, std::memory_order_relaxed)) {
      if ((w & kNeedWake) != 0) {
        wake_one();  // nothing handed over: it re-reads the word and competes again
        result.woke = true;
      }
      return result;
    }
  }
}

}  // namespace exercise
