// exercises/05-starved-waiter/mistakes: a learner's unlock that decides on one load and then
// writes the word with a plain store ("I hold the lock, nobody else writes the word"). The
// waiters do write it, with their own CASes: a request or a NEED_WAKE that lands between the
// load and the store is wiped out.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  const std::uint32_t w = word_.load(std::memory_order_relaxed);
  if ((w & kHandoffWanted) != 0) {
    // release: pairs with the requester's acquire CAS on HANDED.
    word_.store((w & ~kHandoffWanted) | kHanded, std::memory_order_release);
    wake_all();
    handoffs_.fetch_add(1, std::memory_order_relaxed);
    result.handed_off = true;
    return result;
  }
  // release: pairs with the next taker's acquire CAS.
  word_.store(0, std::memory_order_release);
  if ((w & kNeedWake) != 0) {
    wake_one();
    result.woke = true;
  }
  return result;
}

}  // namespace exercise
