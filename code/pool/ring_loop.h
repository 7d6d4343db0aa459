// pool/ring_loop: the loop's side of a ring pool, and its bounded stop: feed the backlog,
// send the stop, settle the threads, drop what is left (chapter 02; one home since issue 26).
// Role: RingPool and ElasticPool keep the same state on the loop thread (the reactor, the
// sink, the loop's stats, the backlog, the threads, whether it has stopped), bind it alike,
// and stop alike but for how the stop reaches their threads (pills into the lane, or the
// gate's flag and a wake for each parked thread), how the backlog is pushed and how
// completions are drained. RingLoop is that state with its bind(); stop_ring_pool() is the
// shared stop, each pool passing the three parts that differ.
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

/// The loop's side of a ring pool: the state only the loop thread touches, and its bind.
struct RingLoop {
  /// Bind to the loop: keep its reactor, sink and stats, and register the completion ring's
  /// loop fd (`done_fd`) with the pool's endpoint, whose readiness takes the loop's pokes.
  void bind(reactor::Reactor& loop_reactor, FrameSink& loop_sink, stats::ThreadStats& loop_stats, int done_fd,
            reactor::IoHandler& endpoint) {
    reactor = &loop_reactor;
    sink = &loop_sink;
    stats = &loop_stats;
    done_endpoint = &endpoint;
    loop_reactor.add(done_fd, EPOLLIN, &endpoint);
  }

  reactor::Reactor* reactor = nullptr;
  FrameSink* sink = nullptr;
  stats::ThreadStats* stats = nullptr;          // the loop thread's record
  reactor::IoHandler* done_endpoint = nullptr;  // the completion ring's loop fd, as the reactor sees it
  std::deque<Job*> backlog;                     // jobs the ring could not take yet
  std::vector<std::thread> threads;
  bool stopped = false;
};

/// A ring pool's stop(deadline_ns): run what was submitted until the deadline, then drop
/// what has not started and let go of threads stuck in a handler (settle_threads). Returns
/// the jobs dropped. `core` is the pool's shared core (jobs, done, slots, past_deadline,
/// deadline_drops); `send_stop()` tells every thread to finish once the ring is empty and
/// must follow every job's push; `push_backlog()` moves what it can of the backlog into the
/// ring; `drain()` delivers the completions waiting in the completion ring.
template <class Core, class SendStop, class PushBacklog, class Drain>
std::size_t stop_ring_pool(Core& core, RingLoop& loop, std::int64_t deadline_ns, SendStop send_stop,
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
    loop.stats->add(stats::Counter::syscalls);
    if (p.revents & POLLIN) core.done.take_poke(*loop.stats);
  };
  settle_threads(loop.threads, core.slots.get(), deadline_ns, at_deadline, turn);
  // Every thread has finished or been let go of; none pops any more. What the ring still
  // holds was left by threads stuck in handlers.
  Job* job = nullptr;
  while (core.jobs.try_pop(job)) {
    delete job;
    ++dropped_here;
  }
  loop.stats->add(stats::Counter::jobs_abandoned, dropped_here);
  drain();
  loop.reactor->remove(core.done.loop_fd(), loop.done_endpoint);
  // relaxed: the threads that counted have been joined (the join orders their counts).
  return dropped_here + core.deadline_drops.load(std::memory_order_relaxed);
}

}  // namespace handoff::pool
