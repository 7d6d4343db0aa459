// exercises/05-starved-waiter/alternatives: a correct unlock written with one release fence
// and relaxed CASes. The fence, before the CAS that frees or hands over the word, orders the
// critical section before that CAS: the next holder's acquire CAS, reading it, synchronizes
// with the fence. ThreadSanitizer does not model a standalone fence; the model does.
#include "tiny_lock.h"

namespace exercise {

TinyUnlockResult TinyLock::unlock() noexcept {
  TinyUnlockResult result;
  // release: pairs with the next holder's acquire CAS (try_lock's, lock()'s or the
  // requester's on HANDED), through whichever relaxed CAS below writes the word.
  std::atomic_thread_fence(std::memory_order_release);
  std::uint32_t w = word_.load(std::memory_order_relaxed);
  for (;;) {
    const bool asked = (w & kHandoffWanted) != 0;
    // Asked: keep LOCKED and NEED_WAKE, withdraw the request, set HANDED. Not asked: free it.
    const std::uint32_t next = asked ? ((w & ~kHandoffWanted) | kHanded) : 0;
    if (!word_.compare_exchange_weak(w, next, std::memory_order_relaxed)) continue;
    if (asked) {
      wake_all();  // the requester sleeps among the others
      handoffs_++;
      result.handed_off = true;
    } else if ((w & kNeedWake) != 0) {
      wake_one();
      result.woke = true;
    }
    return result;
  }
}

}  // namespace exercise
