// exercises/02-lost-wake/mistakes: a learner's park that lowers the count only when its wait
// times out ("a poke is meant for one parked taker, so the poke has used up my announcement").
// The submitter does not lower it: after one poke the count says a taker is parked when none
// is, and every later submit pokes an empty lane.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_relaxed);      // announce
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with submit()'s fence
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {
    parked_.fetch_sub(1, std::memory_order_relaxed);
    return job;
  }
  timed_out = !wake_.wait(limit);
  if (timed_out) parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
