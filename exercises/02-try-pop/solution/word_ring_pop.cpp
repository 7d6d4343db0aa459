// exercises/02-try-pop/solution: the consumer's half of Vyukov's protocol.
#include "word_ring.h"

namespace exercise {

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one of the
// pop's two orderings weakened to relaxed, as a learner might; the model must then find a
// data race on a cell's value, which x86 never shows.
#if defined(TRY_POP_ACQUIRE_RELAXED)
constexpr auto kTakeOrder = std::memory_order_relaxed;
#else
constexpr auto kTakeOrder = std::memory_order_acquire;
#endif
#if defined(TRY_POP_RELEASE_RELAXED)
constexpr auto kGiveBackOrder = std::memory_order_relaxed;
#else
constexpr auto kGiveBackOrder = std::memory_order_release;
#endif

bool WordRing::try_pop(std::uint64_t& out) {
  // relaxed: a candidate position; the cell's sequence decides.
  std::size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Cell& cell = cells_[pos & mask_];
    // acquire: pairs with the producer's release of seq = pos + 1, so its value is visible.
    const std::size_t seq = cell.seq.load(kTakeOrder);
    const auto dif = static_cast<std::ptrdiff_t>(seq - (pos + 1));
    if (dif == 0) {
      // relaxed: the CAS only elects the consumer that owns pos.
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        out = cell.value;
        // release: our read of value happens before the next lap's producer overwrites it
        // (pairs with the producer's acquire load of seq in try_push).
        cell.seq.store(pos + mask_ + 1, kGiveBackOrder);
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
