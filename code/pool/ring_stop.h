// pool/ring_stop: the bounded stop of a ring pool: feed the backlog, send the stop, settle
// the threads, drop what is left (chapter 01's deadline, for chapter 02's and chapter 03's
// pools; one home since issue 26).
// Role: RingPool and ElasticPool stop alike but for how the stop reaches their threads
// (pills into the lane, or the gate's flag and a wake for each parked thread), how the
// backlog is pushed and how completions are drained. stop_ring_pool() is that shared body;
// each pool passes the three parts that differ.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <thread>
#include <vector>

#include "pool/handler_slot.h"
#include "pool/job.h"
#include "reactor/reactor.h"
#include "stats/thread_stats.h"

namespace handoff::pool {

/// The loop's side of a ring pool, as its stop() sees it: the pool's own fields, by
/// reference (loop thread only).
struct RingLoopSide {
  bool& stopped;
  std::vector<std::thread>& threads;
  std::deque<Job*>& backlog;  // jobs the ring could not take yet
  stats::ThreadStats* loop_stats;
  reactor::Reactor* reactor;
  reactor::IoHandler* done_endpoint;  // the completion ring's loop fd, as the reactor sees it
};

/// A ring pool's stop(deadline_ns): run what was submitted until the deadline, then drop
/// what has not started and let go of threads stuck in a handler (settle_threads). Returns
/// the jobs dropped. `core` is the pool's shared core (jobs, done, slots, past_deadline,
/// deadline_drops); `send_stop()` tells every thread to finish once the ring is empty and
/// must follow every job's push; `push_backlog()` moves what it can of the backlog into the
/// ring; `drain()` delivers the completions waiting in the completion ring.
template <class Core, class SendStop, class PushBacklog, class Drain>
std::size_t stop_ring_pool(Core& core, RingLoopSide loop, std::int64_t deadline_ns, SendStop send_stop,
                           PushBacklog push_backlog, Drain drain) {
  if (loop.stopped || loop.threads.empty()) {
    loop.stopped = true;
    return 0;
  }
  loop.stopped = true;
  std::size_t dropped_here = 0;
  bool stop_sent = false;
  auto send_stop_once = [&] {
    if (stop_sent) return;
    send_stop();
    stop_sent = true;
  };
  auto at_deadline = [&] {
    // relaxed: threads look at it before each job; a late look is covered by the let-go.
    core.past_deadline.store(true, std::memory_order_relaxed);
    for (Job* job : loop.backlog) delete job;
    dropped_here += loop.backlog.size();
    loop.backlog.clear();
    send_stop_once();
  };
  auto turn = [&] {
    if (!stop_sent) {
      push_backlog();
      if (loop.backlog.empty()) send_stop_once();  // every job is in the ring before the stop
    }
    drain();
    pollfd p{core.done.loop_fd(), POLLIN, 0};
    ::poll(&p, 1, 1);
    loop.loop_stats->add(stats::Counter::syscalls);
    if (p.revents & POLLIN) core.done.take_poke(*loop.loop_stats);
  };
  settle_threads(loop.threads, core.slots.get(), deadline_ns, at_deadline, turn);
  // Every thread has finished or been let go of; none pops any more. What the ring still
  // holds was left by threads stuck in handlers.
  Job* job = nullptr;
  while (core.jobs.try_pop(job)) {
    delete job;
    ++dropped_here;
  }
  loop.loop_stats->add(stats::Counter::jobs_abandoned, dropped_here);
  drain();
  loop.reactor->remove(core.done.loop_fd(), loop.done_endpoint);
  // relaxed: the threads that counted have been joined (the join orders their counts).
  return dropped_here + core.deadline_drops.load(std::memory_order_relaxed);
}

}  // namespace handoff::pool
