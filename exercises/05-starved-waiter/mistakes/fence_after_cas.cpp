// exercises/05-starved-waiter/mistakes: a learner's unlock with a release fence, placed after
// the relaxed CAS that frees or hands over the word. A release fence orders what comes
// before it against the stores after it: here the critical section is before the fence but
// so is the CAS, and the next holder's acquire reads a store the fence does not cover.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & kHandoffWanted) != 0) {
      if (word_.compare_exchange_weak(w, (w & ~kHandoffWanted) | kHanded, std::memory_order_relaxed)) {
        std::atomic_thread_fence(std::memory_order_release);  // publish the critical section
        wake_all();
        handoffs_.fetch_add(1, std::memory_order_relaxed);
        result.handed_off = true;
        return result;
      }
      continue;
    }
    if (word_.compare_exchange_weak(w, 0, std::memory_order_relaxed)) {
      std::atomic_thread_fence(std::memory_order_release);  // publish the critical section
      if ((w & kNeedWake) != 0) {
        wake_one();
        result.woke = true;
      }
      return result;
    }
  }
}

}  // namespace exercise
