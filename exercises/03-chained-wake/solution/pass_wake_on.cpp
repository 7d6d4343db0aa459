// exercises/03-chained-wake/solution: a taker that takes a job and still sees work passes
// one wake on, by submit's own rule, after a fence that keeps its credit return ahead of its
// look at the ring.
#include "lane.h"

namespace exercise {

// The negative controls (CMakeLists.txt) build this file again with one part of the answer
// taken out, as a learner might: the fence (the model refutes it), the look at the ring, or
// submit's rule (the C++ tests fail those two).
void Lane::pass_wake_on() {
  // The fence. If this taker's poll_lane() ate the poke sent for a parked sibling, it gave
  // the credit back (a fetch_sub on the word, a store) and now looks at the ring (a load);
  // meanwhile submit pushes the next job (a store), fences, and reads the word (a load).
  // That is the store-buffering shape on two locations, the word and the ring: without a
  // fence on this side, submit may read the credit still out (a wake on its way, so it sends
  // none) while this look misses its push (so no chained wake either), and that job waits
  // with its sibling asleep. Coherence orders the word, not the ring. Pairs with the fence
  // in submit() between its push and its read of the word. x86 hides its absence (the
  // fetch_sub is a locked instruction, a full barrier); ARMv8's ldadd does not.
#if !defined(CHAIN_WITHOUT_FENCE)
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
#if defined(CHAIN_WITHOUT_WORK_CHECK)
  const bool more = true;  // the negative control: a wake for an empty ring
#else
  const bool more = !ring_.empty();  // work left in the ring after our pop
#endif
#if defined(CHAIN_IGNORES_WAKES_IN_FLIGHT)
  // The negative control of submit's rule: a poke whenever a sibling is parked, though a
  // wake may already be on its way to it. It counts itself in flight, as a poke must.
  // relaxed: as wake_one_if_parked's, the word orders no data.
  if (more && parked() > 0) {
    wait_word_.fetch_add(1, std::memory_order_relaxed);  // one wake in flight (the low half)
    chained_wakes_.fetch_add(1, std::memory_order_relaxed);
    wake_.poke();
  }
#else
  if (more) wake_one_if_parked(Waker::chain);  // a parked sibling with no wake on its way gets one
#endif
}

}  // namespace exercise
