// exercises/02-lost-wake/mistakes: a learner's wrong park (issue 42's corpus; must fail the model).
// The right order with no fence: on x86 the locked fetch_add is a full barrier, so every
// C++ test passes; the C++ memory model (and an ARM core) lets the re-check read the ring
// before the announcement is visible.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_relaxed);
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
