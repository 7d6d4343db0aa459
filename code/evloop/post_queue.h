// evloop/post_queue: call_soon_threadsafe's way in: posts from any thread, each stamped
// with the loop's local count, straight into the running loop's hands (chapter 04).
// Role: producers append under a short lock and then wake the loop through its
// loop::WakeFlag only if the loop said it is about to wait (chapter 03's protocol); the
// loop takes the whole batch once per turn (and per refill) and merges it into its
// ReadyQueue by the marks.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "evloop/ready_queue.h"

namespace handoff::evloop {

/// Posts in the order producers took the lock. Cost: a lock, a vector append and a load of
/// the loop's count per post; the loop's take is one load when nothing is queued (every
/// turn, usually), else one lock and a swap.
class PostQueue {
 public:
  /// Any thread: queue `handle`, marked with `ready.local_count()` read under the lock.
  void push(std::shared_ptr<HandleState> handle, const ReadyQueue& ready);
  /// Any thread: append `batch` (posts already marked, in their order) and clear it. For a
  /// queue whose only producer appends in mark order: evloop/coordinator forwards its inbox.
  void append(std::vector<Post>& batch);
  /// Loop thread: move every queued post into `out` (which must be empty), oldest first.
  void take(std::vector<Post>& out);
  /// Whether a post is queued: the loop's re-check after it raised its wake flag, which
  /// orders this read after the flag's store (see queued_).
  bool empty() const noexcept;

 private:
  std::mutex mu_;
  std::vector<Post> posts_;
  // Whether posts_ holds a post: written under mu_, read without it by take() (to skip the
  // lock) and empty(). A read that misses a push costs at most a turn: the loop's re-check
  // before it waits reads it after the wake flag's fence, and the push's poke_if_waiting()
  // fences after this store (store-buffering, both sides fenced: one of them sees the other).
  std::atomic<bool> queued_{false};
};

}  // namespace handoff::evloop
