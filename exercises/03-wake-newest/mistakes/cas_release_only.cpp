// exercises/03-wake-newest/mistakes: a learner's waker whose CAS is a release only ("it
// publishes the wake"). What the thread did before it parked is not ordered before what the
// waker does after it claimed the wake: its acquire half is missing.
#include "board.h"

namespace exercise {

bool Board::wake_newest() {
  for (;;) {
    int best = -1;
    std::uint32_t best_ticket = 0;
    for (int i = 0; i < threads_; ++i) {
      std::uint32_t ticket;
      if (parked_ticket(i, ticket) && (best < 0 || ticket > best_ticket)) {
        best = i;
        best_ticket = ticket;
      }
    }
    if (best < 0) return false;
    if (hooks_.after_choice) hooks_.after_choice(best);
    std::uint32_t expected = parked_word(best_ticket);
    // release: pairs with sleep()'s acquire load.
    if (words_[best].compare_exchange_strong(expected, kWoken, std::memory_order_release, std::memory_order_relaxed)) {
      parked_.fetch_sub(1, std::memory_order_relaxed);
      nudge(best);
      return true;
    }
  }
}

}  // namespace exercise
