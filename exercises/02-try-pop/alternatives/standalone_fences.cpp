// exercises/02-try-pop/alternatives: a correct pop in another style (issue 42's corpus; must
// pass the tests and the model). Every atomic relaxed, the orderings as standalone fences:
// an acquire fence after the load that saw the cell published (pairs with the push's release
// store of seq), a release fence before the give-back (pairs with the next lap's push's
// acquire load). ThreadSanitizer does not model standalone fences and reports a race here;
// the C++ memory model does not.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    const std::size_t seq = cell.seq.load(std::memory_order_relaxed);
    const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
    if (dif == 0) {
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        std::atomic_thread_fence(std::memory_order_acquire);
        out = cell.value;
        std::atomic_thread_fence(std::memory_order_release);
        cell.seq.store(pos + mask_ + 1, std::memory_order_relaxed);
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
