// exercises/05-starved-waiter/mistakes: a learner's hand-off that wakes one sleeper, as the
// release does: the requester is one sleeper among others, and the one woken may be another
// waiter, which finds the lock held and sleeps again, while the requester sleeps on.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & kHandoffWanted) != 0) {
      // release: pairs with the requester's acquire CAS on HANDED.
      if (word_.compare_exchange_weak(w, (w & ~kHandoffWanted) | kHanded, std::memory_order_release,
                                      std::memory_order_relaxed)) {
        wake_one();  // the requester is asleep: wake it
        handoffs_.fetch_add(1, std::memory_order_relaxed);
        result.handed_off = true;
        return result;
      }
      continue;
    }
    // release: pairs with the next taker's acquire CAS.
    if (word_.compare_exchange_weak(w, 0, std::memory_order_release, std::memory_order_relaxed)) {
      if ((w & kNeedWake) != 0) {
        wake_one();
        result.woke = true;
      }
      return result;
    }
  }
}

}  // namespace exercise
