// exercises/03-chained-wake/alternatives: a correct pass-on in another style (issue 42's
// corpus; must pass the tests and the model). The fence after the credit return (in
// poll_lane, before our pop) and before this look pairs with submit's fence: store, fence,
// load on each side, on the word and the ring.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ring_.empty()) return;  // nothing left: a woken sibling would find nothing
  wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
