// exercises/04-resolver-cancel/starter: takes the oldest queued lookup, cancelled or not.
#include "lookup_queue.h"

namespace exercise {

LookupQueue::Ticket LookupQueue::take(std::unique_lock<QueueMutex>& lock) {
  queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
  if (stopping_) return nullptr;
  Ticket t = queue_.front();
  queue_.pop_front();
  t->started = true;
  return t;
}

}  // namespace exercise
