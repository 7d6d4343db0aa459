// exercises/03-chained-wake/alternatives: a correct pass-on in another style (issue 42's
// corpus; must pass the tests and the model). submit's rule written out by hand: take one
// credit with a compare-exchange while the parked outnumber the wakes in flight, then poke.
#include "lane.h"

namespace exercise {

void Lane::pass_wake_on() {
  // After the credit's return (a store on the word, in poll_lane) and before the look at the
  // ring (a load): only a seq_cst fence orders a store before a later load of another
  // location. It pairs with submit()'s fence between its push and its read of the word.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ring_.empty()) return;
  // relaxed: as wake_one_if_parked's, the word orders no data; the CAS keeps one credit from
  // being spent twice.
  std::uint64_t word = wait_word_.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint64_t parked = word >> 32, wakes = word & 0xffff'ffffU;
    if (parked <= wakes) return;  // every parked sibling has a wake on its way
    if (wait_word_.compare_exchange_weak(word, word + 1, std::memory_order_relaxed)) break;
  }
  wake_.poke();
}

}  // namespace exercise
