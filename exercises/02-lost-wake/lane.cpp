// exercises/02-lost-wake: the parts of the lane that are right. Read them first.
#include "lane.h"

namespace exercise {

Lane::Lane(std::function<void()> between_steps) : between_steps_(std::move(between_steps)) {}

void Lane::submit(int job) {
  while (!ring_.try_push(std::move(job))) {
  }
  // Push, then read parked_: a store then a load, ordered only by a seq_cst fence. Pairs
  // with the fence your park puts between its announcement and its re-check.
#if !defined(SUBMIT_WITHOUT_FENCE)  // the model's negative control on this side (CMakeLists.txt)
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  // relaxed: the fence orders it after the push.
  if (parked_.load(std::memory_order_relaxed) > 0) wake_.poke();
}

std::optional<int> Lane::take(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int job;
    if (ring_.try_pop(job)) return job;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    bool timed_out = false;
    if (auto found = park(left, timed_out)) return found;
    if (timed_out) return std::nullopt;
  }
}

}  // namespace exercise
