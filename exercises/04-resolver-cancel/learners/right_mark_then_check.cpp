// exercises/04-resolver-cancel/learners: marks the front lookup started, then drops it if it was cancelled, in one hold
// (chapter 04; a learner's answer the tests must pass).
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    Ticket t = std::move(queue_.front());
    queue_.pop_front();
    t->started = true;  // harmless on a cancelled one: its cancel() has already answered
    if (!t->cancelled) {
      if (hooks_.after_cancel_check) hooks_.after_cancel_check();
      return t;
    }
    ++counts_.lookups_skipped;
  }
}

}  // namespace exercise
