// exercises/03-wake-newest/alternatives: a correct waker in another style (issue 42's corpus;
// must pass the tests and the model). A relaxed CAS with standalone fences: an acquire fence
// after a won CAS (pairs with announce()'s release store: the thread's increment happens
// before our decrement) and a release fence before it (pairs with sleep()'s acquire load:
// what we wrote before the wake is visible to the woken thread).
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
    std::atomic_thread_fence(std::memory_order_release);
    if (words_[best].compare_exchange_strong(expected, kWoken, std::memory_order_relaxed)) {
      std::atomic_thread_fence(std::memory_order_acquire);
      parked_.fetch_sub(1, std::memory_order_relaxed);
      nudge(best);
      return true;
    }
  }
}
}  // namespace exercise
