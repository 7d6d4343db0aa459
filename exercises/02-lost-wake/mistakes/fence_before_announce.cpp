// exercises/02-lost-wake/mistakes: a learner's park with its fence before the announcement
// ("fence first, then everything after it is ordered"). A fence orders what is before it
// against what is after it: here the announcement and the re-check are both after it, and
// nothing keeps the re-check's load from being seen before the announcement.
#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with submit()'s fence
  parked_.fetch_add(1, std::memory_order_relaxed);      // announce
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
