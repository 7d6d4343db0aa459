// exercises/04-burst-checkin/learners: counts the checkouts still waiting against the cap, in
// place of the connections promised to woken waiters
// (chapter 04; a learner's answer the tests must fail).
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
  // Waiting checkouts will take idle connections: leave room for each of them.
  const auto free_idle = static_cast<long>(idle_.size()) - static_cast<long>(waiters_.size());
  if (free_idle >= static_cast<long>(pool_size_)) {
    close(c);
    return;
  }
  idle_.push_back(c);
  if (!waiters_.empty()) wake_first_waiter();
}

}  // namespace exercise
