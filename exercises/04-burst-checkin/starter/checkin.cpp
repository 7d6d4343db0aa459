// exercises/04-burst-checkin/starter: SQLAlchemy's rule, as code/upstream/queue_pool.h keeps
// it: the idle queue holds at most pool_size, counting connections promised to woken
// waiters. Compiles, and churns under a burst.
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  if (idle_.size() >= pool_size_) {  // full, though some of it is promised to waiters
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
