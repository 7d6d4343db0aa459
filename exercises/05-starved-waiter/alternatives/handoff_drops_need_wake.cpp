// exercises/05-starved-waiter/alternatives: a hand-off that writes the word afresh as
// LOCKED | HANDED, dropping NEED_WAKE, which the header's spelling of the task keeps. It is
// still correct: the hand-off wakes every sleeper, and each one that sleeps again first sets
// NEED_WAKE itself (lock_slow() never sleeps on a word without it); a thread about to sleep
// on the old word finds it changed and looks again. So no sleeper is left on a word whose
// next unlock will not wake it. The model finds no execution that breaks it.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & kHandoffWanted) != 0) {
      // release: pairs with the requester's acquire CAS on HANDED.
      if (word_.compare_exchange_weak(w, kLocked | kHanded, std::memory_order_release, std::memory_order_relaxed)) {
        wake_all();
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
