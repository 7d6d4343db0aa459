// exercises/02-lost-wake/mistakes: a learner's wrong park (issue 42's corpus; must fail the model).
// The starter's seq_cst fetch_add, moved ahead of the re-check, and no fence: a seq_cst
// operation is ordered against other seq_cst operations and fences, but the ring's loads are
// acquire, so the re-check may still read the ring as it was before the push.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_seq_cst);  // announce
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {  // re-check
    parked_.fetch_sub(1, std::memory_order_seq_cst);
    return job;
  }
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_seq_cst);
  return std::nullopt;
}

}  // namespace exercise
