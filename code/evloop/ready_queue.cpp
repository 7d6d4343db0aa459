// evloop/ready_queue: the callbacks a loop will run next, in scheduling order across the
// loop's own thread and every other (chapter 04).
#include "evloop/ready_queue.h"

#include <algorithm>
#include <utility>

namespace handoff::evloop {

std::uint64_t ReadyQueue::local_count() const noexcept {
  // relaxed: a mark needs no ordering of its own. A post made after a local append it
  // must follow is ordered after it by whatever made the poster know of it (same thread,
  // lock, flag): read-after-write coherence then returns this count or a later one.
  return local_count_.load(std::memory_order_relaxed);
}

// [ready.merge]
void ReadyQueue::push_local(HandlePtr handle) {
  // relaxed (both): the loop thread is the only writer; see local_count() for the readers.
  const std::uint64_t n = local_count_.load(std::memory_order_relaxed);
  local_count_.store(n + 1, std::memory_order_relaxed);
  entries_.push_back(Entry{2 * n + 1, std::move(handle)});
}

void ReadyQueue::merge(std::vector<Post>& posts) {
  for (auto& post : posts) {
    const std::uint64_t key = 2 * post.mark;  // after local mark-1 (key 2m-1), before local m (2m+1)
    if (entries_.empty() || entries_.back().key <= key) {
      entries_.push_back(Entry{key, std::move(post.handle)});  // the usual case: behind everything
      continue;
    }
    auto at = std::upper_bound(entries_.begin(), entries_.end(), key,
                               [](std::uint64_t k, const Entry& e) { return k < e.key; });
    entries_.insert(at, Entry{key, std::move(post.handle)});
  }
  posts.clear();
}
// [ready.merge]

HandlePtr ReadyQueue::pop_front() {
  HandlePtr h = std::move(entries_.front().handle);
  entries_.pop_front();
  return h;
}

}  // namespace handoff::evloop
