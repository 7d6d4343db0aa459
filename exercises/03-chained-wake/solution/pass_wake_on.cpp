// exercises/03-chained-wake/solution: a taker that takes a job and still sees work passes
// one wake on, by submit's own rule.
#include "lane.h"

#include <unistd.h>

namespace exercise {

void Lane::pass_wake_on() {
  // Work left in the ring after our pop: a parked sibling with no wake on its way gets one.
  // The wake this replaces is one an awake taker's look at the socket ate, and the taker
  // that ate it is this one: it looks at the socket before it pops, and the poke it ate was
  // sent after its job's push, so this look at the ring sees that job unless a sibling
  // already took it. No fence before wake_one_if_parked's load of the word: this taker's
  // fetch_sub in poll_lane() comes after submit's CAS in the word's modification order, and
  // a later load by the same thread never reads an older value (coherence). Every job whose
  // poke was not eaten is covered by submit's fenced protocol already.
#if defined(CHAIN_WITHOUT_WORK_CHECK)
  const bool more = true;  // the negative control (CMakeLists.txt, MUTANTS): a wake for an empty ring
#else
  const bool more = !ring_.empty();
#endif
#if defined(CHAIN_IGNORES_WAKES_IN_FLIGHT)
  // The negative control of submit's rule (MUTANTS): a poke whenever a sibling is parked,
  // though a wake may already be on its way to it. It counts itself in flight, as a poke must.
  // relaxed: as wake_one_if_parked's, the word orders no data.
  if (more && parked() > 0) {
    wait_word_.fetch_add(1, std::memory_order_relaxed);  // one wake in flight (the low half)
    chained_wakes_.fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_.get(), &one, sizeof one);
  }
#else
  if (more) wake_one_if_parked(Waker::chain);
#endif
}

}  // namespace exercise
