// exercises/04-resolver-cancel/learners: a correct take that first sweeps every cancelled
// lookup out of the queue (counting them) and then takes the oldest one left, all in one
// hold of the lock.
#include <algorithm>

#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return nullptr;
    const auto swept = std::erase_if(queue_, [](const Ticket& t) { return static_cast<bool>(t->cancelled); });
    counts_.lookups_skipped += swept;
    if (queue_.empty()) continue;
    Ticket t = queue_.front();
    queue_.pop_front();
    if (hooks_.after_cancel_check) hooks_.after_cancel_check();
    t->started = true;
    return t;
  }
}

}  // namespace exercise
