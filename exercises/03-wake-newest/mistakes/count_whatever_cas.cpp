// exercises/03-wake-newest/mistakes: a learner's wrong waker (issue 42's corpus; must fail the
// graders). Lowers the count whatever the CAS said: a thread that cancelled has lowered it
// already, so a lost CAS lowers it a second time.
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
    const bool won =
        words_[best].compare_exchange_strong(expected, kWoken, std::memory_order_acq_rel, std::memory_order_relaxed);
    parked_.fetch_sub(1, std::memory_order_relaxed);  // one park fewer, either way
    if (won) {
      nudge(best);
      return true;
    }
  }
}
}  // namespace exercise
