// exercises/02-try-pop/mistakes: a learner's wrong pop (issue 42's corpus; must fail the
// graders). The acquire put on the CAS that claims the position, the cell's sequence read
// relaxed: the CAS is on dequeue_pos_, which the producer never writes, so it pairs with
// nothing the producer released.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    const std::size_t seq = cell.seq.load(std::memory_order_relaxed);
    const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
    if (dif == 0) {
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_acquire)) {
        out = cell.value;
        cell.seq.store(pos + mask_ + 1, std::memory_order_release);
        return true;
      }
    } else if (dif < 0) {
      return false;
    } else {
      pos = dequeue_pos_.load(std::memory_order_relaxed);
    }
  }
}

}  // namespace exercise
