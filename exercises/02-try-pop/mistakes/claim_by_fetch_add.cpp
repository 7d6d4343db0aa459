// exercises/02-try-pop/mistakes: a learner's wrong pop (issue 42's corpus; must fail the
// graders). Checks that the next cell is published, then claims a position with fetch_add:
// two consumers that both saw the last word published both claim, and the second takes a
// cell that holds nothing yet.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  const std::size_t head = dequeue_pos_.load(std::memory_order_relaxed);
  if (cells_[head & mask_].seq.load(std::memory_order_acquire) != head + 1) return false;  // empty
  const std::size_t pos = dequeue_pos_.fetch_add(1, std::memory_order_relaxed);  // claim
  Cell& cell = cells_[pos & mask_];
  out = cell.value;
  cell.seq.store(pos + mask_ + 1, std::memory_order_release);
  return true;
}

}  // namespace exercise
