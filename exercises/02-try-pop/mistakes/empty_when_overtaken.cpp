// exercises/02-try-pop/mistakes: a learner's pop that gives up when another consumer got
// ahead ("someone else is popping: let the caller try again"). It reports the ring empty
// while words wait in it, so a caller that takes "empty" for empty sleeps beside work.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  // relaxed: a candidate position; the cell's sequence decides.
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  Cell& cell = cells_[pos & mask_];
  // acquire: pairs with the producer's release of seq = pos + 1.
  const std::size_t seq = cell.seq.load(std::memory_order_acquire);
  if (seq != pos + 1) return false;  // not published, or taken already
  if (!dequeue_pos_.compare_exchange_strong(pos, pos + 1, std::memory_order_relaxed)) return false;  // lost the race
  out = cell.value;
  // release: our read of value happens before the next lap's producer overwrites it.
  cell.seq.store(pos + mask_ + 1, std::memory_order_release);
  return true;
}

}  // namespace exercise
