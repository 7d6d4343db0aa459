// exercises/02-lost-wake/mistakes: a learner's wrong park (issue 42's corpus; must fail the model).
// "The announcement must be visible before the re-check", said with an acq_rel fetch_add:
// release orders what comes before it, acquire what comes after a load that reads it; neither
// keeps the announcement ahead of the re-check's load.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_acq_rel);  // announce, "with a barrier"
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {
    parked_.fetch_sub(1, std::memory_order_release);
    return job;
  }
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_release);
  return std::nullopt;
}

}  // namespace exercise
