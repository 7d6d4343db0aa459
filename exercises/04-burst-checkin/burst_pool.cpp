// exercises/04-burst-checkin: the given half of BurstPool (checkout and the waiters) and the
// turns it runs on.
#include "burst_pool.h"

#include <utility>

namespace exercise {

std::size_t Turns::run_turn() {
  std::size_t n = ready_.size();  // this generation; what it queues runs next turn
  for (std::size_t i = 0; i < n; ++i) {
    auto cb = std::move(ready_.front());
    ready_.pop_front();
    cb();
  }
  return n;
}

void BurstPool::checkout(Served done) {
  if (idle_.size() > reserved_) {  // a free idle connection (none is free while anyone waits)
    done(take_idle());
    return;
  }
  if (open_ < pool_size_ + max_overflow_) {
    ++open_;
    ++counts_.opened;
    done(next_++);
    return;
  }
  ++counts_.waits;
  waiters_.push_back(std::move(done));
}

void BurstPool::wake_first_waiter() {
  ++reserved_;
  turns_.call_soon([this, done = std::move(waiters_.front())] {
    --reserved_;
    done(take_idle());
  });
  waiters_.pop_front();
}

void BurstPool::close(Conn) {
  ++counts_.closed_on_checkin;
  --open_;
}

Conn BurstPool::take_idle() {
  Conn c = idle_.front();
  idle_.pop_front();
  return c;
}

}  // namespace exercise
