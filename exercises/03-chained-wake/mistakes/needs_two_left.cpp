// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). Passes a wake on only when more than one job is left, as if this taker would
// come back for the next: the job behind the one it took waits with its sibling asleep.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ring_.size_approx() > 1) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
