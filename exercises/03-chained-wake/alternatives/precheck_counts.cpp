// exercises/03-chained-wake/alternatives: a correct pass-on in another style (issue 42's
// corpus; must pass the tests and the model). The look is done with a seq_cst fence and the
// ring's empty(), then the word is read with submit's own rule, all inside one helper call.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  // The credit return (a store on the word) before the look at the ring (a load): only a
  // seq_cst fence keeps them in order. It pairs with submit()'s fence.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool work_left = !ring_.empty();
  if (work_left && parked() > wakes_in_flight()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
