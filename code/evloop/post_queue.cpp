// evloop/post_queue: call_soon_threadsafe's way in: posts from any thread, each stamped
// with the loop's local count, straight into the running loop's hands (chapter 04).
#include "evloop/post_queue.h"

#include <iterator>
#include <utility>

namespace handoff::evloop {

void PostQueue::push(std::shared_ptr<HandleState> handle, const ReadyQueue& ready) {
  std::lock_guard lock(mu_);
  // Read under the lock: marks never decrease in the queue's order (ReadyQueue's rule).
  posts_.push_back(Post{ready.local_count(), std::move(handle)});
  // relaxed: the post itself is published by the lock; the caller's poke_if_waiting()
  // fences after this store (queued_ in the header).
  queued_.store(true, std::memory_order_relaxed);
}

void PostQueue::append(std::vector<Post>& batch) {
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

void PostQueue::take(std::vector<Post>& out) {
  // relaxed: a hint; what is taken is read under the lock. A push it misses is taken next
  // turn, or seen by the re-check before a wait (queued_ in the header).
  if (!queued_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mu_);
  out.swap(posts_);
  queued_.store(false, std::memory_order_relaxed);  // relaxed: under the lock, as every store
}

bool PostQueue::empty() const noexcept {
  // relaxed: ordered after the wake flag's store by announce_wait()'s seq_cst fence; pairs
  // with the fence in poke_if_waiting() after a push's store (queued_ in the header).
  return !queued_.load(std::memory_order_relaxed);
}

}  // namespace handoff::evloop
