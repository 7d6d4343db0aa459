// exercises/03-chained-wake/alternatives: a correct pass-on in another style (issue 42's
// corpus; must pass the tests and the model). The look is the ring's size_approx(): its
// relaxed loads of the two counters come after the fence, which is all the pairing needs.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  // The credit poll_lane() may have given back (a store on the word) before this look (loads
  // of the ring): a seq_cst fence, paired with the one in submit() between its push and
  // its read of the word, so that one of the two sides sees the other.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool work_left = ring_.size_approx() != 0;
  if (work_left) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
