// exercises/04-burst-checkin/learners: caps the free idle connections at the pool's limit, not its size
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  const bool full = idle_.size() - reserved_ >= pool_size_ + max_overflow_;
  if (full) {
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
