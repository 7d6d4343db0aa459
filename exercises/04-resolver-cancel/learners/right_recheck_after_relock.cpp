// exercises/04-resolver-cancel/learners: lets the lock go after a first look, and checks again before the mark
// (chapter 04; a learner's answer the tests must pass).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    Ticket t = queue_.front();
    queue_.pop_front();
    if (t->cancelled) {
      ++counts_.lookups_skipped;
      continue;
    }
    lock.unlock();  // let cancel() in, then decide again
    lock.lock();
    if (t->cancelled) {  // cancelled meanwhile: its cancel() said it stopped it, and it did
      ++counts_.lookups_skipped;
      continue;
    }
    if (hooks_.after_cancel_check) hooks_.after_cancel_check();
    t->started = true;
    return t;
  }
}

}  // namespace exercise
