// exercises/04-resolver-cancel/learners: skips cancelled lookups without counting them
// (chapter 04; a learner's answer the tests must fail).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    Ticket t = queue_.front();
    queue_.pop_front();
    if (t->cancelled) continue;
    if (hooks_.after_cancel_check) hooks_.after_cancel_check();
    t->started = true;
    return t;
  }
}

}  // namespace exercise
