// exercises/02-lost-wake/alternatives: a correct park written with a compare-and-swap loop
// for the announcement and a seq_cst fence before the re-check; the count goes down by the
// same kind of loop, whichever way the park ends.
#include "lane.h"

namespace exercise {

namespace {

template <class Atomic>
void add(Atomic& count, int delta) {
  int seen = count.load(std::memory_order_relaxed);
  while (!count.compare_exchange_weak(seen, seen + delta, std::memory_order_relaxed)) {
  }
}

}  // namespace

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
  add(parked_, 1);  // announce
  // seq_cst fence: the announcement before the re-check's loads; pairs with submit()'s
  // fence between its push and its read of parked_.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (between_steps_) between_steps_();
  std::optional<int> found;
  if (int job; ring_.try_pop(job)) {
    found = job;
  } else {
    timed_out = !wake_.wait(limit);
  }
  add(parked_, -1);
  return found;
}

}  // namespace exercise
