// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). A fence, but after the look at the ring: it orders the look before the
// word's load, not the credit return before the look.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  const bool more = !ring_.empty();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (more) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
