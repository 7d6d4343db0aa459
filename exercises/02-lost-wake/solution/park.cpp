// exercises/02-lost-wake/solution: announce, fence, re-check, block.
#include <poll.h>
#include <unistd.h>

#include "lane.h"

namespace exercise {

std::optional<int> Lane::park(std::chrono::milliseconds limit, bool& timed_out) {
#if defined(PARK_RECHECK_BEFORE_ANNOUNCE)
  // The negative control (CMakeLists.txt, MUTANTS): the same steps with the re-check first,
  // as a learner might order them. No fence helps: a push between the two steps reads
  // parked_ == 0 and pokes nobody, and the hook holds the taker exactly there.
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
  // order (an ARM processor does it), and the model (lane.pml, park.pml) finds the lost wake.
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (between_steps_) between_steps_();
  int job;
  if (ring_.try_pop(job)) {  // re-check: a push before our announcement is seen here
    parked_.fetch_sub(1, std::memory_order_relaxed);
    return job;
  }
#endif
  pollfd p{wake_.get(), POLLIN, 0};
  timed_out = ::poll(&p, 1, static_cast<int>(limit.count())) == 0;  // block
  std::uint64_t n;
  [[maybe_unused]] auto r = ::read(wake_.get(), &n, sizeof n);
  parked_.fetch_sub(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace exercise
