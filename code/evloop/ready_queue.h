// evloop/ready_queue: the callbacks a loop will run next, in scheduling order across the
// loop's own thread and every other (chapter 04).
// Role: the loop thread appends its own callbacks (call_soon, due timers, readiness) and
// counts them; a thread-safe post is stamped with that count when it is queued
// (evloop/post_queue) and merged here behind exactly the local callbacks counted before it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "evloop/handle.h"

namespace handoff::evloop {

/// A post from another thread: its handle and its mark, the loop's local count when it
/// was queued.
struct Post {
  std::uint64_t mark;
  HandlePtr handle;
};

/// The ready queue. The ordering rule, precisely:
///   - every local append (loop thread) gets the next local number n = 0, 1, 2, ...;
///   - a post is marked with m = the number of local appends made before its mark was read
///     (posts read it under the post queue's lock, so marks never decrease in queue order);
///   - a post runs after every local callback numbered below m and before every local
///     callback numbered m or above that has not run when the post is merged; posts with
///     equal marks keep the post queue's order (one producer's program order, and, across
///     producers, the order in which they took the queue's lock).
/// So each producer's order is kept, and a post made after a local call_soon (seen through
/// any happens-before edge: the same thread, a lock, a flag) runs after it, and before any
/// call_soon made after the post was queued. The one loss: a post whose mark was read
/// but which reaches the queue only after the loop already ran a later local callback runs
/// after that callback (the loop cannot run what it has not seen).
/// Internally each entry has a key (2n+1 for local n, 2m for a post marked m) and the
/// deque stays sorted by key: locals are appended in order, and marks never decrease.
/// Loop thread only, except local_count(), which posts read from any thread.
class ReadyQueue {
 public:
  /// Append a callback from the loop thread.
  void push_local(HandlePtr handle);
  /// Merge posts (in post-queue order) by their marks.
  void merge(std::vector<Post>& posts);
  /// Take the front callback (the queue must not be empty).
  HandlePtr pop_front();

  bool empty() const noexcept { return entries_.empty(); }
  std::size_t size() const noexcept { return entries_.size(); }
  /// The number of local appends so far (any thread).
  std::uint64_t local_count() const noexcept;

 private:
  /// One ready callback and its key (its place in the merged order).
  struct Entry {
    std::uint64_t key;
    HandlePtr handle;
  };
  std::deque<Entry> entries_;
  // Written by the loop thread only (a single writer: load then store), read by posting
  // threads under the post queue's lock.
  std::atomic<std::uint64_t> local_count_{0};
};

}  // namespace handoff::evloop
