// exercises/02-try-pop/mistakes: a learner's wrong pop (issue 42's corpus; must fail the
// graders). Reads the value as soon as the cell is published, then claims the position: the
// read is ordered, but a consumer that loses the CAS has read a word another consumer owns,
// and the winner may already have given the cell back to the next lap's producer.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    const std::size_t seq = cell.seq.load(std::memory_order_acquire);
    const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
    if (dif == 0) {
      const std::uint64_t v = cell.value;  // read first, claim after
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        out = v;
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
