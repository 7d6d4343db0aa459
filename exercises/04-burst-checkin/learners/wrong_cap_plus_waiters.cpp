// exercises/04-burst-checkin/learners: raises the cap by the number still waiting
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  const bool full = idle_.size() >= pool_size_ + waiters_.size();  // room for each waiter
  if (full) {
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
