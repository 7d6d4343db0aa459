// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). Keeps submit's rule but pokes the socket itself, without counting the wake
// in flight: the woken sibling (or a look at the socket) then gives back a credit that was
// never taken, and the word's counts no longer say who has a wake coming.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ring_.empty() && parked() > wakes_in_flight()) wake_.poke();
}

}  // namespace exercise
