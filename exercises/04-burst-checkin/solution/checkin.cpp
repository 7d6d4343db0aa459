// exercises/04-burst-checkin/solution: only free idle connections count against pool_size;
// one promised to a woken waiter is already that waiter's.
#include "burst_pool.h"

namespace exercise {

void BurstPool::checkin(Conn c) {
// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one part
// wrong, as a learner might: no cap at all (KEEP_EVERY_CONNECTION); a cap that spares a
// check-in only while a waiter still waits, so the connections promised to waiters already
// woken count as idle again (CLOSE_ONLY_WITHOUT_WAITERS); the waiter served inside the
// check-in (SERVE_WAITER_INSIDE_CHECKIN).
#if defined(KEEP_EVERY_CONNECTION)
  const bool full = false;
#elif defined(CLOSE_ONLY_WITHOUT_WAITERS)
  const bool full = waiters_.empty() && idle_.size() >= pool_size_;
#else
  // While anyone waits, no idle connection is free (checkout takes a free one before it
  // waits), so a check-in with waiters is never closed; with none, the free ones are capped.
  const bool full = idle_.size() - reserved_ >= pool_size_;
#endif
  if (full) {
    close(c);
    return;
  }
  idle_.push_back(c);
#if defined(SERVE_WAITER_INSIDE_CHECKIN)
  if (!waiters_.empty()) {
    Served done = std::move(waiters_.front());
    waiters_.pop_front();
    done(take_idle());
  }
#else
  if (!waiters_.empty()) wake_first_waiter();
#endif
}

}  // namespace exercise
