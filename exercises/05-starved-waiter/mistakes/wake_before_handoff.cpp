// exercises/05-starved-waiter/mistakes: a learner's hand-off that wakes the sleepers first,
// "so that the requester is on its way", and then sets HANDED. A requester woken before the
// CAS reads a word that still asks, sleeps again, and the CAS wakes nobody.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  if ((w & kHandoffWanted) != 0) {
    wake_all();  // get the requester going while we hand over
    // release: pairs with the requester's acquire CAS on HANDED.
    while (!word_.compare_exchange_weak(w, (w & ~kHandoffWanted) | kHanded, std::memory_order_release,
                                        std::memory_order_relaxed)) {
    }
    handoffs_.fetch_add(1, std::memory_order_relaxed);
    result.handed_off = true;
    return result;
  }
  // release: pairs with the next taker's acquire CAS.
  while (!word_.compare_exchange_weak(w, 0, std::memory_order_release, std::memory_order_relaxed)) {
    if ((w & kHandoffWanted) != 0) return unlock();  // a request came in: hand over after all
  }
  if ((w & kNeedWake) != 0) {
    wake_one();
    result.woke = true;
  }
  return result;
}

}  // namespace exercise
