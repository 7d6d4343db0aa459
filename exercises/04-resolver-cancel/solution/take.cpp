// exercises/04-resolver-cancel/solution: the oldest queued lookup nobody cancelled; the
// cancelled ones met on the way are dropped, unrun, under the same lock cancel() takes.
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
#ifdef TAKE_NEWEST_FIRST
    Ticket t = queue_.back();
    queue_.pop_back();
#else
    Ticket t = queue_.front();
    queue_.pop_front();
#endif
    if (t->cancelled) {
      ++counts_.lookups_skipped;
      continue;
    }
    // The check above and the mark below are one step under the lock cancel() takes: a
    // cancel() lands before the check (skipped) or after the mark (too late), never between.
#ifdef CHECK_THEN_RELOCK
    lock.unlock();  // mutant: the check and the mark in two steps; a cancel() lands between
#endif
    if (hooks_.after_cancel_check) hooks_.after_cancel_check();
#ifdef CHECK_THEN_RELOCK
    lock.lock();
#endif
#ifndef LEAVE_UNMARKED
    t->started = true;  // from here cancel() is too late: the lookup will run
#endif
    return t;
  }
}

}  // namespace exercise
