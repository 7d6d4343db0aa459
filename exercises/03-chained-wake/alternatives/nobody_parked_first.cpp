// exercises/03-chained-wake/alternatives: a correct pass-on in another style (issue 42's
// corpus; must pass the tests and the model). Returns early, before the fence, when the word
// counts nobody parked: the word is read after this taker's own credit return, which every
// announcement and every credit taken for a parked sibling precede in the word's order.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  // relaxed: a read of the word after this taker's own read-modify-writes of it; coherence
  // returns their value or a later one, so a sibling parked before the poke it ate is seen.
  // A sibling that announces later re-checks the ring after its own fence, and submit's
  // fence pairs with that one.
  if (parked() == 0) return;
  // The credit's return (a store on the word, in poll_lane) before the look at the ring (a
  // load): a seq_cst fence, paired with submit()'s between its push and its read of the word.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ring_.empty()) wake_one_if_parked(Waker::chain);
}

}  // namespace exercise
