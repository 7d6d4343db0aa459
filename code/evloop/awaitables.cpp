// evloop/awaitables: what a Task can wait for on the loop: a timer, a readable or a
// writable descriptor (chapter 04).
#include "evloop/awaitables.h"

namespace handoff::evloop {

void SleepAwaiter::await_suspend(std::coroutine_handle<> waiter) {
  timer_ = loop_.call_later(delay_, [waiter] { waiter.resume(); });
}

void ReadyAwaiter::await_suspend(std::coroutine_handle<> waiter) {
  auto resume = [this, waiter] {
    withdraw();  // one-shot: before the coroutine runs on (and may wait on the fd again)
    waiter.resume();
  };
  if (direction_ == Direction::read) {
    loop_.add_reader(fd_, resume);
  } else {
    loop_.add_writer(fd_, resume);
  }
  watching_ = true;
}

void ReadyAwaiter::withdraw() noexcept {
  if (!watching_) return;
  watching_ = false;
  if (direction_ == Direction::read) {
    loop_.remove_reader(fd_);
  } else {
    loop_.remove_writer(fd_);
  }
}

}  // namespace handoff::evloop
