// pool/job: the unit of work the loop hands a pool thread, and the frames it hands back
// (chapter 01).
// Changed in chapters 04, 06: run_in_executor's task (04), the unsent-bytes budget (06).
// Role: name who a piece of work belongs to (connection id, exchange sequence) so the
// loop can route every frame back to its exchange, or drop it if the connection is gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "http/handler.h"
#include "http/request.h"
#include "http/response.h"

namespace handoff::pool {

/// What a connection shares with every job it has handed to a pool. The connection (loop
/// thread) and the pool threads running its jobs each hold a reference, so it outlives
/// whichever lets go last.
struct JobTicket {
  /// Raised by the loop when the connection closes. A pool thread that has not started a
  /// job yet drops it unrun and sends no frame for it (the connection that would take one
  /// is gone); a streaming handler stops waiting for room. relaxed on both sides: a late
  /// look only costs one job run for nobody, it orders no other data.
  std::atomic<bool> cancelled{false};
  /// Response payload bytes the connection holds for this client and has not yet written
  /// (published by the loop after each change), plus those pool threads have emitted and
  /// the loop has not yet taken in. A streaming handler waits while this is over budget.
  std::atomic<std::int64_t> unsent_bytes{0};
  /// The exchange whose answer the connection is writing now, and the bytes of
  /// unsent_bytes that it holds for the exchanges behind it (published by the loop after
  /// each change). The front exchange's handler waits only for the bytes ahead of it on
  /// the wire: a later exchange's held answer cannot leave before the front one ends, so
  /// counting it would make the two wait for each other for good.
  std::atomic<std::uint64_t> front_seq{0};
  std::atomic<std::int64_t> held_bytes{0};
  /// Above this many unsent bytes a connection stops reading and a streaming handler
  /// waits: the bound on what one client that does not read can make the server hold.
  /// The default of unsent_budget.
  static constexpr std::int64_t kUnsentBudget = std::int64_t{1} << 20;
  JobTicket() = default;
  explicit JobTicket(std::int64_t budget) : unsent_budget(budget) {}
  /// The budget itself (chapter 06: --max-unsent-bytes). Set at construction, before the
  /// ticket is shared, and never written again: a plain value every thread may read.
  const std::int64_t unsent_budget = kUnsentBudget;
};

/// A plain piece of work for a pool thread, with no request and no frame: what
/// run_in_executor hands a pool (chapter 04, evloop/executor). Its owner hears of its end
/// exactly once: through complete() after run(), or, for a task that never ran (dropped at
/// a stop's deadline, left in a stopped pool), through the task's destructor, which must
/// deliver an error. A task whose thread stop() let go of inside run() is destroyed on that
/// thread without complete(), and must then touch nothing of the loop's: its owner learns
/// of it from whoever stopped the pool (evloop::Executor::stop).
class PoolTask {
 public:
  virtual ~PoolTask() = default;
  /// Pool thread, inside the handler slot: do the work, keep its result or its exception.
  virtual void run() noexcept = 0;
  /// Pool thread, back in the pool's code after run() (the loop's world is alive): hand
  /// the result over. Its own wake reaches the loop, so it also covers a loop that waits
  /// for the room this job's pop made in a full job ring.
  virtual void complete() noexcept = 0;
};

/// A request to run on a pool thread, or a task (then `handler` is null). Owned by the
/// pool once submitted; it is deleted on a pool thread when the handler returns, or unrun
/// when it is dropped (pool/run_job).
struct Job {
  std::uint64_t conn_id = 0;  ///< the connection's id, never reused within a worker
  std::uint64_t seq = 0;      ///< the exchange's sequence number on that connection
  http::Request request;
  const http::Handler* handler = nullptr;
  std::shared_ptr<JobTicket> ticket;  ///< the connection's; null in component tests and for tasks
  std::unique_ptr<PoolTask> task{};   ///< set instead of a handler: run_in_executor's work
};

/// One piece of a response travelling back to the loop. Owned by the loop once received.
struct Frame {
  /// abort: the handler failed after its stream began; the connection ends the stream
  /// unterminated and closes, so the client sees a truncated response, never a false end.
  enum class Kind : std::uint8_t { whole, stream_head, chunk, end, abort };
  std::uint64_t conn_id = 0;
  std::uint64_t seq = 0;
  Kind kind = Kind::whole;
  http::Response response;  ///< whole: all of it; stream_head: status + type; chunk: body
};

/// Where the loop delivers frames it takes off a pool's completion channel.
class FrameSink {
 public:
  virtual void on_frame(Frame& frame) = 0;

 protected:
  ~FrameSink() = default;
};

}  // namespace handoff::pool
