// exercises/03-chained-wake/mistakes: a learner's wrong pass-on (issue 42's corpus; must fail
// the graders). The argument chapter 03 refutes: "this taker's fetch_sub comes after submit's
// CAS in the word's order, so a later load by the same thread sees it: no fence needed".
// Every C++ test passes it on x86.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  // No fence: coherence on the word orders our credit return before this look (it does not:
  // coherence orders the word, not the ring).
  if (!ring_.empty()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
