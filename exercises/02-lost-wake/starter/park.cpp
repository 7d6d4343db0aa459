// exercises/02-lost-wake/starter: compiles, parks, and sometimes sleeps through a wake.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  int job;
  if (ring_.try_pop(job)) return job;  // re-check the ring
  if (between_steps_) between_steps_();
  parked_.fetch_add(1, std::memory_order_seq_cst);  // announce
  timed_out = !wake_.wait(limit);                   // block
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
