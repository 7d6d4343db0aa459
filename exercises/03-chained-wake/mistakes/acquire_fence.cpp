// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). "A load of the ring comes next, so an acquire fence": an acquire fence
// orders loads before it against what follows, not the credit's store before the look.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!ring_.empty()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
