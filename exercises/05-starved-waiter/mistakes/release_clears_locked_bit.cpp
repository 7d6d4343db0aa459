// exercises/05-starved-waiter/mistakes: a learner's release that clears LOCKED with one
// fetch_and, leaving the other bits as they are ("the waiters' bits are theirs"). A request
// that lands between the check and the fetch_and stays in a free word: the spinner takes
// the lock past it, or nobody ever hands it over.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  while ((w & kHandoffWanted) != 0) {
    // release: pairs with the requester's acquire CAS on HANDED.
    if (word_.compare_exchange_weak(w, (w & ~kHandoffWanted) | kHanded, std::memory_order_release,
                                    std::memory_order_relaxed)) {
      wake_all();
      handoffs_.fetch_add(1, std::memory_order_relaxed);
      result.handed_off = true;
      return result;
    }
  }
  // release: pairs with the next taker's acquire CAS.
  const std::uint32_t before = word_.fetch_and(~kLocked, std::memory_order_release);
  if ((before & kNeedWake) != 0) {
    wake_one();
    result.woke = true;
  }
  return result;
}

}  // namespace exercise
