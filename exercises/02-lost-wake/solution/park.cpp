// exercises/02-lost-wake/solution: announce, fence, re-check, block.
#include "lane.h"

namespace exercise {

// The negative controls (CMakeLists.txt) build this file again with one part of the answer
// taken out, as a learner might: the re-check first (the C++ tests' forced window fails it,
// and the model, wherever the hook sits), the fence left out, or the announcement kept when
// the re-check finds a job (the model fails both).
std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
#if defined(PARK_RECHECK_BEFORE_ANNOUNCE)
  // No fence helps: a push between the two steps reads parked_ == 0 and pokes nobody, and
  // the hook holds the taker exactly there.
  if (int job; ring_.try_pop(job)) return job;
  if (between_steps_) between_steps_();
  parked_.fetch_add(1, std::memory_order_relaxed);
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#else
  parked_.fetch_add(1, std::memory_order_relaxed);  // announce
  // The announcement must be visible before the re-check loads the ring: a store then a
  // load. Pairs with the fence in submit() between its push and its read of parked_. On x86
  // the locked fetch_add is already a full barrier, so leaving the fence out passes every
  // test there; the C++ memory model lets a relaxed RMW and a later load be seen out of
  // order (an ARM processor does it), and the grader's model finds the lost wake.
#if !defined(PARK_WITHOUT_FENCE)
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {  // re-check: a push before our announcement is seen here
#if !defined(PARK_KEEPS_ANNOUNCEMENT)
    parked_.fetch_sub(1, std::memory_order_relaxed);  // not parked after all
#endif
    return job;
  }
#endif
  timed_out = !wake_.wait(limit);  // block
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
