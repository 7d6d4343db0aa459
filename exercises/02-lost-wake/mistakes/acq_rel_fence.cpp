// exercises/02-lost-wake/mistakes: a learner's wrong park (issue 42's corpus; must fail the model).
// The right steps with an acq_rel fence: it orders loads before it and stores after it, not a
// store before it against a load after it (the store-buffering shape needs seq_cst).
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acq_rel);
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {
    parked_.fetch_sub(1, std::memory_order_relaxed);
    return job;
  }
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
