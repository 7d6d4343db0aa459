// exercises/04-burst-checkin/learners: keeps the connection first, wakes a waiter, and then
// closes the newest idle one if the free ones are more than pool_size
// (chapter 04; a learner's answer the tests must pass).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  idle_.push_back(c);
  if (!waiters_.empty()) {
    wake_first_waiter();
    return;
  }
  if (idle_.size() - reserved_ > pool_size_) {  // one free too many: the one just checked in
    idle_.pop_back();
    close(c);
  }
}

}  // namespace exercise
