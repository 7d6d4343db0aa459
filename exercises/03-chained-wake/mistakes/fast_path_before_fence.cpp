// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). Saves the fence when the ring looks empty: that first look is the unfenced
// one, and it is the look that may miss submit's push.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  if (ring_.empty()) return;  // nothing left: no need to pay for the fence
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ring_.empty()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
