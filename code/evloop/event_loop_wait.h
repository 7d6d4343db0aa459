// evloop/event_loop_wait: the callback loop's two steps before a blocking wait, the loop's
// half of call_soon_threadsafe's wake (chapter 04, on chapter 03's protocol).
// Role: the order of "raise the wake flag" and "re-check the post queue" in one place, a
// template over the flag and the queue, so that EventLoop (with its reactor::WakeFlag and
// PostQueue) and the relaxed-memory model (code/relacy/post_wake_model.cpp, with
// reactor::WaitFlag and BasicPostQueue on Relacy's atomics) run the same code. A post's half is
// the queue's push followed by the flag's fence-and-read (EventLoop::call_soon_threadsafe).
#pragma once

#include <cstdint>

#include "sync/announce_order.h"

namespace handoff::evloop {

/// The order of the loop's two steps before a blocking wait (sync/announce_order.h); the
/// reverse, FOR TESTS AND MODELS ONLY, is the negative control of call_soon_threadsafe's wake.
using WaitOrder = sync::AnnounceOrder;

/// The loop's steps before a wait that could block: true when it may block (no post is
/// queued, and one pushed from now on finds the flag raised and pokes), false when a post
/// is queued (poll without blocking; the flag is down). `Wake` has announce_wait() (raise
/// and fence) and end_wait(); `Posts` has empty(). `between` runs between the two steps (a
/// test hook); `announcements` counts the flag's raisings.
// [evloop.may_block]
template <class Wake, class Posts, class Between>
bool may_block(WaitOrder order, Wake& wake, const Posts& posts, Between&& between, std::uint64_t& announcements) {
  if (order == WaitOrder::announce_then_recheck) {
    // Raise the flag and fence (pairs with the fence after a post's push, in the flag's
    // poke_if_waiting), then re-check the post queue: a post pushed before the flag is
    // seen here, one pushed after it finds the flag and pokes.
    wake.announce_wait();
    ++announcements;
    between();
    if (!posts.empty()) {
      wake.end_wait();
      return false;
    }
    return true;
  }
  // The broken order: a post pushed between the re-check and the flag finds no flag, sends
  // no poke, and waits out the loop's timeout.
  const bool posted = !posts.empty();
  between();
  if (posted) return false;
  wake.announce_wait();
  ++announcements;
  return true;
}
// [evloop.may_block]

}  // namespace handoff::evloop
