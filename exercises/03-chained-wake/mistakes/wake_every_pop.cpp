// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). Chains on every pop, whatever the ring holds: a sibling woken for an empty
// ring parks again, two system calls for nothing.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
