// evloop/post_queue: call_soon_threadsafe's way in: posts from any thread, each stamped
// with the loop's local count, straight into the running loop's hands (chapter 04).
// Role: producers append under a short lock and then wake the loop through its
// loop::WakeFlag only if the loop said it is about to wait (chapter 03's protocol); the
// loop takes the whole batch once per turn (and per refill) and merges it into its
// ReadyQueue by the marks.
#pragma once

#include <mutex>
#include <vector>

#include "evloop/ready_queue.h"

namespace handoff::evloop {

/// Posts in the order producers took the lock. Cost: a lock, a vector append and a load of
/// the loop's count per post; the loop's take is one lock and a swap.
class PostQueue {
 public:
  /// Any thread: queue `handle`, marked with `ready.local_count()` read under the lock.
  void push(std::shared_ptr<HandleState> handle, const ReadyQueue& ready);
  /// Any thread: append `batch` (posts already marked, in their order) and clear it. For a
  /// queue whose only producer appends in mark order: evloop/coordinator forwards its inbox.
  void append(std::vector<Post>& batch);
  /// Loop thread: move every queued post into `out` (which must be empty), oldest first.
  void take(std::vector<Post>& out);
  /// Whether a post is queued: the loop's re-check after it raised its wake flag (the lock
  /// orders the read after the flag's fence, and pairs with the push's unlock).
  bool empty() const;

 private:
  mutable std::mutex mu_;
  std::vector<Post> posts_;
};

}  // namespace handoff::evloop
