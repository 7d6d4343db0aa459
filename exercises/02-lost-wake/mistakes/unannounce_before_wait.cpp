// exercises/02-lost-wake/mistakes: a learner's park that takes its announcement back before
// it blocks ("the count says who is about to sleep; I have decided, so I am done with it").
// A push after that reads parked_ == 0 and pokes nobody, and the taker sleeps beside it.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_relaxed);      // announce
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with submit()'s fence
  if (between_steps_) between_steps_();
  int job;
  const bool found = ring_.try_pop(job);
  parked_.fetch_sub(1, std::memory_order_relaxed);  // the decision is made either way
  if (found) return job;
  timed_out = !wake_.wait(limit);
  return std::nullopt;
}

}  // namespace exercise
