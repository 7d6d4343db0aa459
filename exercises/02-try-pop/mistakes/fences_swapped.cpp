// exercises/02-try-pop/mistakes: a learner's wrong pop (issue 42's corpus; must fail the
// graders). Relaxed atomics with standalone fences, each on the wrong side: a release fence
// before the sequence's load orders nothing after it, and an acquire fence after the give-
// back orders nothing before it.
#include "word_ring.h"

namespace exercise {

bool WordRing::try_pop(std::uint64_t& out) {
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    std::atomic_thread_fence(std::memory_order_release);
    const std::size_t seq = cell.seq.load(std::memory_order_relaxed);
    const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
    if (dif == 0) {
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        out = cell.value;
        cell.seq.store(pos + mask_ + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
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
