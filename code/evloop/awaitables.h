// evloop/awaitables: what a Task can wait for on the loop: a timer, a readable or a
// writable descriptor (chapter 04).
// Role: turn the loop's callbacks (call_later, add_reader, add_writer) into one-shot waits
// a coroutine can co_await, each withdrawn when the waiting frame is destroyed, so that a
// cancelled task costs no wake-up and is never resumed.
#pragma once

#include <coroutine>

#include "evloop/event_loop.h"

namespace handoff::evloop {

/// `co_await sleep_for(loop, d)`: resume from a timer callback once `d` has passed (always
/// through the loop, even for d <= 0, as asyncio.sleep(0) yields once). Destroyed while
/// waiting, it cancels its timer: a cancelled timer never wakes the loop.
class [[nodiscard]] SleepAwaiter {
 public:
  SleepAwaiter(EventLoop& loop, EventLoop::Clock::duration delay) : loop_(loop), delay_(delay) {}
  SleepAwaiter(const SleepAwaiter&) = delete;
  SleepAwaiter& operator=(const SleepAwaiter&) = delete;
  ~SleepAwaiter() { timer_.cancel(); }  // a no-op once it has run

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> waiter);
  void await_resume() const noexcept {}

 private:
  EventLoop& loop_;
  EventLoop::Clock::duration delay_;
  Handle timer_;
};

inline SleepAwaiter sleep_for(EventLoop& loop, EventLoop::Clock::duration delay) { return {loop, delay}; }

/// `co_await readable(loop, fd)` / `co_await writable(loop, fd)`: resume from the loop's
/// readiness callback once `fd` is ready (or has hung up or failed: the next I/O call says
/// which). One-shot: the reader (writer) is removed before the coroutine resumes, and by
/// the destructor of a frame destroyed while waiting. The descriptor must have no other
/// reader (writer) on this loop meanwhile: add_reader would replace it.
class [[nodiscard]] ReadyAwaiter {
 public:
  enum class Direction { read, write };
  ReadyAwaiter(EventLoop& loop, int fd, Direction direction) : loop_(loop), fd_(fd), direction_(direction) {}
  ReadyAwaiter(const ReadyAwaiter&) = delete;
  ReadyAwaiter& operator=(const ReadyAwaiter&) = delete;
  ~ReadyAwaiter() { withdraw(); }

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> waiter);
  void await_resume() const noexcept {}

 private:
  void withdraw() noexcept;
  EventLoop& loop_;
  int fd_;
  Direction direction_;
  bool watching_ = false;
};

inline ReadyAwaiter readable(EventLoop& loop, int fd) { return {loop, fd, ReadyAwaiter::Direction::read}; }
inline ReadyAwaiter writable(EventLoop& loop, int fd) { return {loop, fd, ReadyAwaiter::Direction::write}; }

}  // namespace handoff::evloop
