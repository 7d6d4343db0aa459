// pool/handler_pool: the interface every loop↔pool hand-off implements (chapter 01).
// Changed in chapter 03: a cap on the loop's wait, for the age check.
// Role: let one event loop drive any hand-off variant (datagram socketpairs in chapter
// 01, rings in chapter 02, the elastic pool in chapter 03) through the same calls (bind,
// submit, the wait hooks, stop), so that a stage changes its hand-off by the PoolFactory
// it gives the server and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "pool/job.h"
#include "reactor/reactor.h"
#include "stats/thread_stats.h"

namespace handoff::pool {

/// Which loop a pool serves and how many threads it runs.
struct PoolConfig {
  int worker_index = 0;  ///< which loop this pool serves (names threads pool-W-i)
  int threads = 1;       ///< --blocking-threads
};

/// A pool of handler threads fed by one loop thread.
///
/// Threading: every call below is made by the loop thread only. Jobs may complete on any
/// pool thread; their frames reach the FrameSink on the loop thread, in the order each job
/// emitted them.
class HandlerPool {
 public:
  virtual ~HandlerPool() = default;

  /// Register the completion channel with the loop's reactor and start the threads.
  /// `loop_stats` is the calling loop thread's record: the pool counts the loop's side of
  /// the hand-off there, and registers one record per pool thread in `registry`.
  virtual void bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
                    stats::ThreadStats& loop_stats) = 0;
  /// Hand a job to some pool thread. Never blocks the loop.
  virtual void submit(Job* job) = 0;
  /// Called just before the loop waits for events. Returning false means completions are
  /// already waiting and the loop must not block (it polls with a zero timeout). Jobs the
  /// pool could not hand over yet are no reason to return false: the pool wakes the loop
  /// when there is room for them.
  virtual bool ready_to_wait() { return true; }
  /// Called instead of ready_to_wait() on a turn whose poll will not block anyway (the
  /// loop's timeout is already 0: callbacks are ready): hand over what waits for room, but
  /// announce no wait and spin for nothing (a pool with a loop spin spun up to its
  /// budget on such turns). after_wait() still follows the poll. The default does nothing.
  virtual void before_nonblocking_poll() {}
  /// Called after every wait, whatever woke it: deliver completions not signalled by an fd.
  virtual void after_wait() {}
  /// Called after ready_to_wait(): the longest the loop may wait now, in milliseconds. A pool
  /// that must look at its threads' progress while jobs wait caps it (chapter 03's age
  /// check); the default, kNoWaitCap, leaves the loop's own timeout alone.
  virtual int max_wait_ms() { return kNoWaitCap; }
  /// Stop every thread (a poison pill each in the datagram and ring pools; the elastic pool
  /// raises a stop flag and wakes every thread) after the jobs already submitted, delivering
  /// their frames as they come, and join; but no later than `deadline_ns` (monotonic, as
  /// stats::monotonic_ns): from then on jobs not yet started are dropped unrun, and a
  /// thread still inside a handler is let go of (detached; the frames it emits later go
  /// nowhere). Returns the jobs dropped for the deadline (also counted as jobs_abandoned).
  /// Idempotent: a second call returns 0. kNoDeadline waits for every job.
  virtual std::size_t stop(std::int64_t deadline_ns) = 0;

  /// A deadline that never comes: stop() runs every job submitted, however long it takes.
  static constexpr std::int64_t kNoDeadline = std::numeric_limits<std::int64_t>::max();
  /// No cap on the loop's wait from the pool.
  static constexpr int kNoWaitCap = std::numeric_limits<int>::max();
};

/// Builds the pool a stage asks for; a composition root passes one to the server.
using PoolFactory = std::function<std::unique_ptr<HandlerPool>(const PoolConfig&)>;

}  // namespace handoff::pool
