// exercises/04-merge-order: the loop around the merge, given. Read it first.
#include "post_loop.h"

#include <utility>

namespace exercise {

PostLoop::PostLoop(std::chrono::milliseconds park_limit) : park_limit_(park_limit) {}

void PostLoop::call_soon(Callback cb) {
  // relaxed (both): the loop thread is the only writer; posters read the count under mu_.
  const std::uint64_t n = local_count_.load(std::memory_order_relaxed);
  local_count_.store(n + 1, std::memory_order_relaxed);
  ready_.push_back(Entry{false, n, std::move(cb)});
}

void PostLoop::call_soon_threadsafe(Callback cb) {
  {
    std::lock_guard lock(mu_);
    // relaxed: a mark orders nothing itself. A post that must follow a call_soon knows of
    // it through some happens-before edge (the same thread, a lock, a flag), and read-
    // after-write coherence then returns that call_soon's count or a later one. Read under
    // mu_, so marks never decrease in the order posts are queued.
    posts_.push_back(Post{local_count_.load(std::memory_order_relaxed), std::move(cb)});
  }
  posted_.notify_one();  // the post is in posts_ already: a turn's wait checks it under mu_
}

void PostLoop::run_forever() {
  // asyncio's run_forever: a turn, then end if a stop is pending; the stop is used up.
  for (;;) {
    turn();
    if (stopping_) break;
  }
  stopping_ = false;
}

void PostLoop::turn() {
  {
    std::unique_lock lock(mu_);
    if (ready_.empty() && !stopping_) posted_.wait_for(lock, park_limit_, [this] { return !posts_.empty(); });
    taken_.swap(posts_);
  }
  merge(taken_);
  taken_.clear();
  // One generation: what is ready now; what it schedules or posts waits for the next turn.
  for (std::size_t ntodo = ready_.size(); ntodo > 0; --ntodo) {
    const Callback cb = std::move(ready_.front().cb);
    ready_.pop_front();
    cb();
  }
}

}  // namespace exercise
