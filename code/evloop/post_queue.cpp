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
}

void PostQueue::append(std::vector<Post>& batch) {
  {
    std::lock_guard lock(mu_);
    if (posts_.empty()) {
      posts_.swap(batch);
    } else {
      posts_.insert(posts_.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
    }
  }
  batch.clear();
}

void PostQueue::take(std::vector<Post>& out) {
  std::lock_guard lock(mu_);
  out.swap(posts_);
}

bool PostQueue::empty() const {
  std::lock_guard lock(mu_);
  return posts_.empty();
}

}  // namespace handoff::evloop
