// exercises/04-burst-checkin/learners: adds the promised connections to the idle queue's count
// where it should take them away
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  if (idle_.size() + reserved_ >= pool_size_) {  // promised ones are spoken for: count them too
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
