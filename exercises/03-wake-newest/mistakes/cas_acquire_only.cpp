// exercises/03-wake-newest/mistakes: a learner's waker whose CAS is an acquire only ("it
// reads the thread's announcement"). Nothing it wrote before the wake is published to the
// woken thread: its release half is missing.
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
    // acquire: pairs with announce()'s release.
    if (words_[best].compare_exchange_strong(expected, kWoken, std::memory_order_acquire, std::memory_order_relaxed)) {
      parked_.fetch_sub(1, std::memory_order_relaxed);
      nudge(best);
      return true;
    }
  }
}

}  // namespace exercise
