// exercises/04-resolver-cancel/learners: counts a skip outside the lock, and lets the lock go between check and mark
// (chapter 04; a learner's answer the tests must fail).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    Ticket t = queue_.front();
    queue_.pop_front();
    const bool skip = t->cancelled;
    lock.unlock();  // no need to hold the queue while deciding
    if (!skip && hooks_.after_cancel_check) hooks_.after_cancel_check();
    lock.lock();
    if (skip) {
      ++counts_.lookups_skipped;
      continue;
    }
    t->started = true;
    return t;
  }
}

}  // namespace exercise
