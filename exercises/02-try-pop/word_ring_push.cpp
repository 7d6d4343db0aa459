// exercises/02-try-pop: the constructor and the push, given. Read them before the pop.
#include <stdexcept>

#include "word_ring.h"

namespace exercise {

WordRing::WordRing(std::size_t capacity) : mask_(capacity - 1), cells_(new Cell[capacity]) {
  if (capacity < 2 || (capacity & mask_) != 0) throw std::invalid_argument("capacity: a power of two, at least 2");
  for (std::size_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
}

bool WordRing::try_push(std::uint64_t value) {
  // relaxed: a candidate position; the cell's sequence decides.
  std::size_t pos = enqueue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    // acquire: pairs with the consumer's release of seq = pos (the previous lap's pop).
    const std::size_t seq = cell.seq.load(std::memory_order_acquire);
    const auto dif = static_cast<std::ptrdiff_t>(seq - pos);
    if (dif == 0) {
      // relaxed: the CAS only elects the producer that owns pos.
      if (enqueue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        cell.value = value;
        // release: publishes value to the consumer's acquire load of seq.
        cell.seq.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (dif < 0) {
      return false;  // full: the consumer of the previous lap has not taken this cell
    } else {
      pos = enqueue_pos_.load(std::memory_order_relaxed);
    }
  }
}

}  // namespace exercise
