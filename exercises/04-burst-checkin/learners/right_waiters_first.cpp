// exercises/04-burst-checkin/learners: a waiter gets the connection first; only with nobody
// waiting does the cap on free idle connections apply (chapter 04; a learner's answer the
// tests must pass).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  if (!waiters_.empty()) {
    idle_.push_back(c);
    wake_first_waiter();
    return;
  }
  const std::size_t free_idle = idle_.size() - reserved_;
  if (free_idle >= pool_size_) {
    close(c);
    return;
  }
  idle_.push_back(c);
}

}  // namespace exercise
