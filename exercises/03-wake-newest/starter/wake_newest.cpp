// exercises/03-wake-newest/starter: compiles, wakes somebody, and gets the count wrong.
#include "board.h"

namespace exercise {

bool Board::wake_newest() {
  // Wakes the first parked thread it finds (not the newest), by a plain store, and lowers
  // the count whether or not the thread had already left PARKED by itself.
  for (int i = 0; i < threads_; ++i) {
    std::uint32_t ticket;
    if (!parked_ticket(i, ticket)) continue;
    if (hooks_.after_choice) hooks_.after_choice(i);
    words_[i].store(kWoken, std::memory_order_release);
    parked_.fetch_sub(1, std::memory_order_relaxed);
    nudge(i);
    return true;
  }
  return false;
}

}  // namespace exercise
