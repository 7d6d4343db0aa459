// exercises/03-wake-newest/mistakes: a learner's wrong waker (issue 42's corpus; must fail the
// graders). Checks that the word still says PARKED, then stores WOKEN: the thread may cancel
// between the check and the store, and the hook is called before the check, so the tests'
// forced window never falls between them.
#include "board.h"

namespace exercise {

bool Board::wake_newest() {
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
  if (words_[best].load(std::memory_order_acquire) != parked_word(best_ticket)) return false;
  words_[best].store(kWoken, std::memory_order_release);
  parked_.fetch_sub(1, std::memory_order_relaxed);
  nudge(best);
  return true;
}
}  // namespace exercise
