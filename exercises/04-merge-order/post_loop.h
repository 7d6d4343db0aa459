// exercises/04-merge-order: a callback loop fed by its own thread and by others; the merge
// of the two to write.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace exercise {

using Callback = std::function<void()>;

/// A callback another thread posted, with its mark: the number of call_soon calls the loop
/// had made when the post was queued.
struct Post {
  std::uint64_t mark;
  Callback cb;
};

/// A queued callback. A local one (call_soon) carries its local number: the n-th call_soon
/// is numbered n - 1. A posted one carries its post's mark.
struct Entry {
  bool posted;
  std::uint64_t number;
  Callback cb;
};

/// Chapter 04's EventLoop (code/evloop/event_loop.h) cut down to its ready queue and its
/// thread-safe posts (code/evloop/ready_queue.h, post_queue.h): no descriptors, no timers.
/// The loop's own thread queues callbacks with call_soon; any thread posts them with
/// call_soon_threadsafe into a queue of its own, which each turn takes and merges into the
/// ready queue before it runs a generation (asyncio's turn).
///
/// The order to keep is asyncio's, where both calls append to one queue: callbacks run in
/// the order they were scheduled, whatever thread scheduled them. Here it is kept by the
/// marks. The rule, precisely:
///   - a post marked m runs after every local callback numbered below m (the loop had
///     queued them before the post read its mark) and before every local callback numbered
///     m or above (queued after);
///   - posts keep the order in which they were queued, which is each producer's own order
///     (and, across producers, the order they took the post queue's lock); marks never
///     decrease in that order.
class PostLoop {
 public:
  /// `park_limit`: the longest a turn with nothing to do waits for a post.
  explicit PostLoop(std::chrono::milliseconds park_limit = std::chrono::milliseconds(1000));

  // ---- given (post_loop.cpp)

  /// Loop thread: queue `cb` behind every callback queued, and count it.
  void call_soon(Callback cb);
  /// Any thread: queue `cb` in the post queue, marked with the loop's count of call_soon.
  void call_soon_threadsafe(Callback cb);
  /// Loop thread: end the run after the current turn (asyncio's loop.stop()).
  void stop() noexcept { stopping_ = true; }
  /// Loop thread: turns until stop(), then clear the stop.
  void run_forever();

 private:
  /// Given: take the posts (waiting for one if nothing is ready and no stop is pending),
  /// merge them, then run the callbacks that are ready (one generation).
  void turn();
  /// THE EXERCISE (starter/, solution/): move each post, in the order given (the order
  /// they were queued), into ready_, where the rule above says it runs. ready_ holds the
  /// callbacks not yet run, already in that order. The loop clears `posts` afterwards.
  void merge(std::vector<Post>& posts);

  std::deque<Entry> ready_;                    // loop thread only
  std::atomic<std::uint64_t> local_count_{0};  // written by the loop thread; read by posts
  std::mutex mu_;
  std::condition_variable posted_;
  std::vector<Post> posts_;  // guarded by mu_
  std::vector<Post> taken_;  // loop thread: this turn's posts
  const std::chrono::milliseconds park_limit_;
  bool stopping_ = false;
};

}  // namespace exercise
