// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). The fence in its place, but acq_rel: it does not keep a store before it
// ahead of a load after it.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_acq_rel);
  if (!ring_.empty()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
