// exercises/02-try-pop/solution: the consumer's half of Vyukov's protocol.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  // relaxed: a candidate position; the cell's sequence decides.
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    // acquire: pairs with the producer's release of seq = pos + 1, so its value is visible.
    const std::size_t seq = cell.seq.load(std::memory_order_acquire);
    const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
    if (dif == 0) {
      // relaxed: the CAS only elects the consumer that owns pos.
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        out = cell.value;
        // release: our read of value happens before the next lap's producer overwrites it.
        cell.seq.store(pos + mask_ + 1, std::memory_order_release);
        return true;
      }
    } else if (dif < 0) {
      return false;  // not published yet: empty, or a producer is mid-push
    } else {
      pos = dequeue_pos_.load(std::memory_order_relaxed);  // another consumer took pos
    }
  }
}

}  // namespace exercise
