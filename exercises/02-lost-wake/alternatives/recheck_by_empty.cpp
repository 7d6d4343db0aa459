// exercises/02-lost-wake/alternatives: a correct park in another style (issue 42's corpus;
// must pass the tests and the model). The re-check only looks (empty()) and leaves the pop
// to take(), which loops: a park that sees work gives up its announcement and returns.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with submit()'s fence
  if (between_steps_) between_steps_();
  if (!ring_.empty()) {
    parked_.fetch_sub(1, std::memory_order_relaxed);
    return std::nullopt;  // not timed out: take() pops it
  }
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
