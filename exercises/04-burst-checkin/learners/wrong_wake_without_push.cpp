// exercises/04-burst-checkin/learners: wakes the first waiter without putting the connection
// in the idle queue first, as if the wake carried it
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  if (!waiters_.empty()) {
    wake_first_waiter();  // the waiter will take this connection
    return;
  }
  if (idle_.size() - reserved_ >= pool_size_) {
    close(c);
    return;
  }
  idle_.push_back(c);
}

}  // namespace exercise
