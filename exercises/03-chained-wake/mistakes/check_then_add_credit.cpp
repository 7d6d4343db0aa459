// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). submit's rule written out as a check and then an add: between the look at
// the counts and the fetch_add, submit (or a sibling's park ending) can change the word, and
// one credit is spent twice, a sibling woken for nothing. The rule's look and its take must
// be one compare-exchange, as wake_one_if_parked's.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ring_.empty()) return;
  if (parked() > wakes_in_flight()) {
    wait_word_.fetch_add(1, std::memory_order_relaxed);  // one wake in flight (the low half)
    wake_.poke();
  }
}

}  // namespace exercise
