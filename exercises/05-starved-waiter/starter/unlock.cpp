// exercises/05-starved-waiter/starter: Onload's unlock. It releases and wakes one sleeper,
// and hands it nothing, asked or not.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  // relaxed: a guess for the CAS, which orders.
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  // release: pairs with the next taker's acquire CAS. Compared whole, so a NEED_WAKE set
  // after our load fails the CAS and we look again.
  while (!word_.compare_exchange_weak(w, 0, std::memory_order_release, std::memory_order_relaxed)) {
  }
  if ((w & kNeedWake) != 0) {
    wake_one();  // it re-reads the word and competes again
    result.woke = true;
  }
  return result;
}

}  // namespace exercise
