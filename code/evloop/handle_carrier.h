// evloop/handle_carrier: a loop-thread Handle carried off its loop's thread and back, as a
// run_in_executor callable's capture or result (chapter 04).
// Role: a loop-thread Handle may be copied and dropped only on the thread running its loop
// (HandleState::Holders::loop_thread; a debug build checks it, evloop/loop_owner.h), yet a
// callable handed to a pool is destroyed on the pool's thread. The carrier moves anywhere
// without touching the Handle's count; the loop's thread takes the Handle out, and a carrier
// dropped while still holding it sends the drop to its loop with call_soon_threadsafe, as
// Chromium's base::OnTaskRunnerDeleter deletes an object on the sequence that owns it.
#pragma once

#include <optional>
#include <utility>

#include "evloop/handle.h"

namespace handoff::evloop {

class EventLoop;

/// One loop-thread Handle, boxed for a trip off its loop's thread.
///
/// Guarantees: moving the carrier (to a pool's thread, into a result) touches nothing of
/// the Handle; take() gives the Handle back on the loop's thread; a carrier destroyed still
/// holding it, on any thread, posts the drop to its loop, which drops the Handle on its own
/// thread in its next turn (or, if no run comes, when the loop is destroyed). The loop must
/// outlive the carrier, as an Executor's loop outlives its pool's stop; a callable whose
/// thread the pool's stop let go of is destroyed when its work returns, so the loop must then
/// outlive that work too. Cost: nothing when the Handle is taken back; one
/// call_soon_threadsafe when the carrier is dropped full.
class HandleCarrier {
 public:
  HandleCarrier() = default;
  /// Loop thread: carry `handle`, one of `loop`'s.
  HandleCarrier(EventLoop& loop, Handle handle) noexcept : loop_(&loop), handle_(std::move(handle)) {}
  HandleCarrier(HandleCarrier&& other) noexcept
      : loop_(other.loop_), handle_(std::exchange(other.handle_, std::nullopt)) {}
  HandleCarrier& operator=(HandleCarrier&& other) noexcept {
    HandleCarrier(std::move(other)).swap(*this);
    return *this;
  }
  /// Any thread: a Handle still held is dropped on its loop's thread.
  ~HandleCarrier() { post_drop(); }

  /// The loop's thread (a debug build aborts on any other while the loop runs): the
  /// Handle, leaving the carrier empty. An empty carrier gives an empty Handle.
  Handle take();
  /// Whether it still holds its Handle (any thread).
  bool holds() const noexcept { return handle_.has_value(); }

  void swap(HandleCarrier& other) noexcept {
    std::swap(loop_, other.loop_);
    std::swap(handle_, other.handle_);
  }

 private:
  void post_drop() noexcept;

  EventLoop* loop_ = nullptr;
  std::optional<Handle> handle_;  // engaged while it holds one
};

}  // namespace handoff::evloop
