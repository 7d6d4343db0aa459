// exercises/04-resolver-cancel/learners: skips one cancelled lookup, then takes the next without checking it
// (chapter 04; a learner's answer the tests must fail).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (stopping_) return nullptr;
  Ticket t = queue_.front();
  queue_.pop_front();
  if (t->cancelled) {
    ++counts_.lookups_skipped;
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    t = queue_.front();
    queue_.pop_front();
  }
  if (hooks_.after_cancel_check) hooks_.after_cancel_check();
  t->started = true;
  return t;
}

}  // namespace exercise
