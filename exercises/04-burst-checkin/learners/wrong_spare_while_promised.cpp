// exercises/04-burst-checkin/learners: spares every check-in while any promise is outstanding
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  const bool full = reserved_ == 0 && idle_.size() >= pool_size_;  // promised ones are in use
  if (full) {
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
