// exercises/02-lost-wake/mistakes: a learner's wrong park (issue 42's corpus; must fail the model).
// The starter's order kept (re-check, then announce) with a fence added, and the test's hook
// called before the re-check, where the forced window finds nothing: the C++ tests pass it.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) return job;               // re-check
  parked_.fetch_add(1, std::memory_order_relaxed);  // announce
  std::atomic_thread_fence(std::memory_order_seq_cst);
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
