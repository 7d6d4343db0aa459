// evloop/post_queue: call_soon_threadsafe's way in: posts from any thread, each stamped
// with the loop's local count, straight into the running loop's hands (chapter 04).
// Role: producers append under a short lock and then wake the loop through its
// reactor::WakeFlag only if the loop said it is about to wait (chapter 03's protocol); the
// loop takes the whole batch once per turn (and per refill) and merges it into its
// ReadyQueue by the marks. A template over the atomics seam (sync/atomics.h: its atomics
// and its mutex), so that the loop (PostQueue) and the relaxed-memory model of its wake
// (code/relacy/post_wake_model.cpp) run the same code.
#pragma once

#include <iterator>
#include <mutex>
#include <utility>
#include <vector>

#include "evloop/ready_queue.h"
#include "sync/atomics.h"

namespace handoff::evloop {

/// Posts in the order producers took the lock. Cost: a lock, a vector append and a load of
/// the loop's count per post; the loop's take is one load when nothing is queued (every
/// turn, usually), else one lock and a swap.
template <class Atoms = sync::StdAtomics>
class BasicPostQueue {
 public:
  /// Any thread: queue `handle`, marked with `ready.local_count()` read under the lock.
  /// (`Ready` is a ReadyQueue; a template parameter so that a model can stand in a count.)
  template <class Ready>
  void push(HandlePtr handle, const Ready& ready) {
    std::lock_guard lock(mu_);
    // Read under the lock: marks never decrease in the queue's order (ReadyQueue's rule).
    posts_.push_back(Post{ready.local_count(), std::move(handle)});
    // relaxed: the post itself is published by the lock; the caller's poke_if_waiting()
    // fences after this store (queued_ below).
    queued_.store(true, std::memory_order_relaxed);
  }

  /// Any thread: append `batch` (posts already marked, in their order) and clear it. For a
  /// queue whose only producer appends in mark order: evloop/coordinator forwards its inbox.
  void append(std::vector<Post>& batch) {
    {
      std::lock_guard lock(mu_);
      if (posts_.empty()) {
        posts_.swap(batch);
      } else {
        posts_.insert(posts_.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
      }
      queued_.store(true, std::memory_order_relaxed);  // relaxed: as in push()
    }
    batch.clear();
  }

  /// Loop thread: move every queued post into `out` (which must be empty), oldest first.
  void take(std::vector<Post>& out) {
    // relaxed: a hint; what is taken is read under the lock. A push it misses is taken next
    // turn, or seen by the re-check before a wait (queued_ below).
    if (!queued_.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(mu_);
    out.swap(posts_);
    queued_.store(false, std::memory_order_relaxed);  // relaxed: under the lock, as every store
  }

  /// Whether a post is queued: the loop's re-check after it raised its wake flag, which
  /// orders this read after the flag's store (see queued_).
  bool empty() const noexcept {
    // relaxed: ordered after the wake flag's store by announce_wait()'s seq_cst fence; pairs
    // with the fence in poke_if_waiting() after a push's store (queued_ below).
    return !queued_.load(std::memory_order_relaxed);
  }

 private:
  typename Atoms::mutex mu_;
  std::vector<Post> posts_;
  // Whether posts_ holds a post: written under mu_, read without it by take() (to skip the
  // lock) and empty(). A read that misses a push costs at most a turn: the loop's re-check
  // before it waits reads it after the wake flag's fence, and the push's poke_if_waiting()
  // fences after this store (store-buffering, both sides fenced: one of them sees the other).
  typename Atoms::template atomic<bool> queued_{false};
};

/// The product's post queue.
using PostQueue = BasicPostQueue<>;
extern template class BasicPostQueue<>;

}  // namespace handoff::evloop
