// exercises/04-resolver-cancel/learners: a correct take that calls the test's hook without
// the lock ("a hook should never run under my lock"), right after taking the lookup off the
// queue, and then checks and marks in one hold of the lock. A cancel() while the lock is let
// go finds the lookup not started and stops it; the check, after, sees that and skips it.
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    Ticket t = queue_.front();
    queue_.pop_front();
    if (hooks_.after_cancel_check) {
      lock.unlock();
      hooks_.after_cancel_check();
      lock.lock();
    }
    if (t->cancelled) {  // checked and marked in this one hold of the lock
      ++counts_.lookups_skipped;
      continue;
    }
    t->started = true;
    return t;
  }
}

}  // namespace exercise
