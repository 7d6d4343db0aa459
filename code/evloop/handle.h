// evloop/handle: a callback the event loop will run, and the caller's means to cancel it
// (chapter 04).
// Role: what call_soon, call_later and add_reader give back, as asyncio's Handle and
// TimerHandle do: cancel() before it runs and it never runs; a cancelled timer also tells
// its heap, so that the heap can count its dead entries and compact (evloop/timer_heap).
#pragma once

#include <functional>
#include <memory>
#include <utility>

namespace handoff::evloop {

using Callback = std::function<void()>;

class TimerHeap;

/// The state a Handle shares with the queues that hold it. Loop thread only, except that a
/// thread-safe post creates one on its own thread and hands it over through the post queue.
struct HandleState {
  explicit HandleState(Callback c) : callback(std::move(c)) {}
  Callback callback;
  bool cancelled = false;
  bool repeating = false;     ///< a reader or writer: runs at every readiness until removed
  TimerHeap* heap = nullptr;  ///< set while the handle sits in a timer heap
};

/// A cancellable callback. Copies refer to the same callback. Not thread-safe: cancel() on
/// the loop's thread (as with asyncio's Handle.cancel()).
class Handle {
 public:
  Handle() = default;
  explicit Handle(std::shared_ptr<HandleState> state) : state_(std::move(state)) {}

  /// Cancel: the callback will not run (a no-op once it has run or was cancelled). Its
  /// captures are released at once.
  void cancel();
  bool cancelled() const noexcept { return state_ && state_->cancelled; }

 private:
  std::shared_ptr<HandleState> state_;
};

}  // namespace handoff::evloop
