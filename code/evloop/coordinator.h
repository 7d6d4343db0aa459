// evloop/coordinator: a thread between call_soon_threadsafe and the loop, seed 003's
// "before" hand-in (chapter 04).
// Role: the coordinator arm of EventLoopOptions::hand_in. A post goes into the
// coordinator's inbox and wakes the coordinator thread if it sleeps; that thread moves the
// inbox into the loop's post queue and wakes the loop if it sleeps: two thread wake-ups per
// handle when both sleep, where the direct arm (the default) costs one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "evloop/post_queue.h"
#include "evloop/ready_queue.h"
#include "reactor/wake_flag.h"

namespace handoff::evloop {

/// The coordinator thread ("loop-coord") and its inbox. Both hops use chapter 03's
/// flag-and-poke (reactor::WakeFlag): the coordinator sleeps as the loop does, so a producer
/// pokes it only when it said it waits, and it pokes the loop only when the loop said so.
///
/// Order: the mark a post carries (ReadyQueue's rule) is read by the producer, under the
/// inbox's lock, when it calls submit(), not when the coordinator forwards it; the
/// coordinator is the loop post queue's only producer and forwards whole batches in inbox
/// order. So marks never decrease in the loop's post queue either, each producer's order is
/// kept (across runs too), and a post runs in its mark's place among the loop's own
/// callbacks if it reaches the loop before the loop runs past that place. The hop makes
/// that window a thread wake-up long, where the direct arm's is a lock's.
///
/// Cost per post: the inbox's lock and a fence; per batch the coordinator forwards: the
/// loop queue's lock and a fence; a poke (an eventfd write, and a read on the woken side) per sleeping
/// thread.
class Coordinator {
 public:
  /// Start the thread, which forwards into `loop_posts` and pokes `loop_wake`; both must
  /// outlive this object. `before_forward` (FOR TESTS ONLY) runs on the coordinator thread
  /// before each batch is forwarded.
  Coordinator(PostQueue& loop_posts, reactor::WakeFlag& loop_wake, std::function<void()> before_forward = {});
  /// Stop and join the thread. It forwards what the inbox still holds first (it reads the
  /// stop only once the inbox is empty); the loop's destructor then releases those posts
  /// with the rest of its queues, without running them.
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  /// Any thread: queue `handle`, marked with `ready.local_count()` now, and wake the
  /// coordinator if it said it waits.
  void submit(HandlePtr handle, const ReadyQueue& ready);

  /// Posts forwarded into the loop's queue so far (any thread; acquire: the posts counted
  /// are in the loop's queue).
  std::uint64_t forwarded() const noexcept;
  /// Pokes sent to wake the coordinator thread (any thread; a count, ordered by nothing).
  std::uint64_t wakes() const noexcept;
  /// Pokes the coordinator sent to wake the loop (any thread; a count, ordered by nothing).
  std::uint64_t loop_wakes() const noexcept;

 private:
  void run();

  PostQueue& loop_posts_;
  reactor::WakeFlag& loop_wake_;
  std::function<void()> before_forward_;
  PostQueue inbox_;
  reactor::WakeFlag wake_{true, reactor::WakeFlag::Channel::eventfd};  // the coordinator's own flag and eventfd
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> forwarded_{0}, wakes_{0}, loop_wakes_{0};
  std::thread thread_;  // last: started once everything above exists
};

}  // namespace handoff::evloop
