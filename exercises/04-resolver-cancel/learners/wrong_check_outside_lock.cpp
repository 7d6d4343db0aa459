// exercises/04-resolver-cancel/learners: pops under the lock, checks and hooks outside it, marks under it again
// (chapter 04; a learner's answer the tests must fail).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    Ticket t = queue_.front();
    queue_.pop_front();
    lock.unlock();
    const bool cancelled = t->cancelled;  // (a learner's "the flag is only read")
    if (!cancelled && hooks_.after_cancel_check) hooks_.after_cancel_check();
    lock.lock();
    if (cancelled) {
      ++counts_.lookups_skipped;
      continue;
    }
    t->started = true;
    return t;
  }
}

}  // namespace exercise
