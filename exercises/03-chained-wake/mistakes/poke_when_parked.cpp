// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). Pokes whenever a sibling is parked and there is work, without submit's rule:
// a wake already on its way to that sibling gets a second one, and no credit is counted.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ring_.empty() && parked() > 0) {
    chained_wakes_.fetch_add(1, std::memory_order_relaxed);
    wake_.poke();
  }
}

}  // namespace exercise
