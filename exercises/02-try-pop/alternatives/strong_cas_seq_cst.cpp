// exercises/02-try-pop/alternatives: a correct pop in another style (issue 42's corpus; must
// pass the tests and the model). A strong CAS and seq_cst everywhere: stronger than needed
// (seq_cst loads are acquire, stores release), and a lost CAS re-reads the position itself.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  for (;;) {
    std::size_t pos = dequeue_pos_.load();
    Cell& cell = cells_[pos & mask_];
    const std::size_t seq = cell.seq.load();
    if (seq < pos + 1) return false;  // not published yet
    if (seq == pos + 1 && dequeue_pos_.compare_exchange_strong(pos, pos + 1)) {
      out = cell.value;
      cell.seq.store(pos + mask_ + 1);
      return true;
    }
  }
}

}  // namespace exercise
