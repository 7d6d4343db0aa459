// exercises/05-starved-waiter/mistakes: a learner's "fair" unlock that hands the lock over
// whenever someone sleeps (NEED_WAKE), not only when a waiter has asked. A sleeper that has
// not asked never takes HANDED (only a requester does): the lock stays held by nobody.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & (kHandoffWanted | kNeedWake)) != 0) {
      // release: pairs with the requester's acquire CAS on HANDED.
      if (word_.compare_exchange_weak(w, (w & ~kHandoffWanted) | kHanded, std::memory_order_release,
                                      std::memory_order_relaxed)) {
        wake_all();
        handoffs_.fetch_add(1, std::memory_order_relaxed);
        result.handed_off = true;
        return result;
      }
      continue;
    }
    // release: pairs with the next taker's acquire CAS.
    if (word_.compare_exchange_weak(w, 0, std::memory_order_release, std::memory_order_relaxed)) {
      return result;
    }
  }
}

}  // namespace exercise
