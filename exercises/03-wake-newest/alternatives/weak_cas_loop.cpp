// exercises/03-wake-newest/alternatives: a correct waker in another style (issue 42's corpus;
// must pass the tests and the model). A weak CAS in a loop on the chosen word, seq_cst: a
// spurious failure re-reads the word and, if it still says PARKED(ticket), tries again.
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
    const std::uint32_t parked = parked_word(best_ticket);
    std::uint32_t expected = parked;
    while (!words_[best].compare_exchange_weak(expected, kWoken)) {  // seq_cst: acquire and release
      if (expected != parked) break;  // the thread left PARKED by itself: choose again
    }
    if (expected == parked) {
      parked_.fetch_sub(1);
      nudge(best);
      return true;
    }
  }
}
}  // namespace exercise
