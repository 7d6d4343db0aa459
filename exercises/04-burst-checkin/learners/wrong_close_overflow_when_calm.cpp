// exercises/04-burst-checkin/learners: closes an overflow connection whenever nobody waits or is promised one
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  const bool full = waiters_.empty() && reserved_ == 0 && open_ > pool_size_;  // back down to pool_size
  if (full) {
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
