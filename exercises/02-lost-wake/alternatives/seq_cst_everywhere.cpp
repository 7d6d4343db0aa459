// exercises/02-lost-wake/alternatives: a correct park in another style (issue 42's corpus;
// must pass the tests and the model). Every operation seq_cst, and the fence kept: more
// ordering than needed, none missing.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  parked_.fetch_add(1, std::memory_order_seq_cst);
  // The store-buffering pair with submit: this fence pairs with submit()'s.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {
    parked_.fetch_sub(1, std::memory_order_seq_cst);
    return job;
  }
  timed_out = !wake_.wait(limit);
  parked_.fetch_sub(1, std::memory_order_seq_cst);
  return std::nullopt;
}

}  // namespace exercise
