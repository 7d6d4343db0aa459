// exercises/02-lost-wake/mistakes: a learner's wrong park (issue 42's corpus; must fail the model).
// The right order and fence, but a re-check that finds a job returns it still counted
// parked: only the path through the wait takes the announcement back.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (between_steps_) between_steps_();
  if (int job; ring_.try_pop(job)) return job;
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
