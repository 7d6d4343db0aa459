// exercises/05-starved-waiter/mistakes: a learner's unlock with relaxed CASes throughout
// ("the CAS is atomic, and the bits are all that matter"). The word moves as it should, but
// nothing the holder wrote is published to the next holder: x86 hides it, the C++ memory
// model does not.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    if ((w & kHandoffWanted) != 0) {
      if (word_.compare_exchange_weak(w, (w & ~kHandoffWanted) | kHanded, std::memory_order_relaxed)) {
        wake_all();
        handoffs_.fetch_add(1, std::memory_order_relaxed);
        result.handed_off = true;
        return result;
      }
      continue;
    }
    if (word_.compare_exchange_weak(w, 0, std::memory_order_relaxed)) {
      if ((w & kNeedWake) != 0) {
        wake_one();
        result.woke = true;
      }
      return result;
    }
  }
}

}  // namespace exercise
