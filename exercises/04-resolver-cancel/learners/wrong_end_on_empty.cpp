// exercises/04-resolver-cancel/learners: returns nullptr when a skip empties the queue
// (chapter 04; a learner's answer the tests must fail).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  while (!stopping_ && !queue_.empty()) {
    Ticket t = queue_.front();
    queue_.pop_front();
    if (t->cancelled) {
      ++counts_.lookups_skipped;
      continue;
    }
    if (hooks_.after_cancel_check) hooks_.after_cancel_check();
    t->started = true;
    return t;
  }
  return nullptr;  // stopping, or nothing left
}

}  // namespace exercise
