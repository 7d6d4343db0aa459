// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). A seq_cst load of the word in place of the fence: it orders the credit's
// return before this load of the same word (coherence already did), not before the look at
// the ring; only a fence keeps a store ahead of a later load of another location.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  (void)wait_word_.load(std::memory_order_seq_cst);
  if (!ring_.empty()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
