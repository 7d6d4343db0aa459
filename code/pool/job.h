// pool/job: the unit of work the loop hands a pool thread, and the frames it hands back
// (chapter 01).
// Role: name who a piece of work belongs to (connection id, exchange sequence) so the
// loop can route every frame back to its exchange, or drop it if the connection is gone.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

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
  static constexpr std::int64_t kUnsentBudget = std::int64_t{1} << 20;
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

/// The Responder a pool thread gives a handler: each call becomes one Frame, passed to
/// `emit` (the pool's completion path). It remembers how far the handler has answered, so
/// that a handler that fails can still be answered (pool/run_job), and it applies the
/// ticket's backpressure to a handler that streams.
template <class Emit>
class FrameResponder final : public http::Responder {
 public:
  /// How far the handler has answered.
  enum class Progress { nothing, streaming, done };

  /// `give_up` ends a wait for room early when raised (the pool's shutdown deadline passed).
  FrameResponder(const Job& job, const std::atomic<bool>& give_up, Emit emit)
      : conn_id_(job.conn_id), seq_(job.seq), ticket_(job.ticket.get()), give_up_(give_up), emit_(std::move(emit)) {}
  void send(http::Response r) override {
    progress_ = Progress::done;
    push(Frame::Kind::whole, std::move(r));
  }
  void start_stream(int status, std::string content_type) override {
    progress_ = Progress::streaming;
    http::Response r;
    r.status = status;
    r.content_type = std::move(content_type);
    push(Frame::Kind::stream_head, std::move(r));
  }
  void send_chunk(std::string data) override {
    wait_for_room();
    http::Response r;
    r.body = std::move(data);
    push(Frame::Kind::chunk, std::move(r));
  }
  void end_stream() override {
    progress_ = Progress::done;
    push(Frame::Kind::end, {});
  }
  /// Ends a response the handler could not finish: a 500 if it sent nothing, else an abort.
  void fail() {
    if (progress_ == Progress::streaming) {
      push(Frame::Kind::abort, {});
    } else if (progress_ == Progress::nothing) {
      http::Response r;
      r.status = 500;
      r.body = "Internal Server Error\n";
      push(Frame::Kind::whole, std::move(r));
    }
    progress_ = Progress::done;
  }
  Progress progress() const noexcept { return progress_; }

 private:
  // [responder.backpressure]
  void wait_for_room() const {
    if (ticket_ == nullptr) return;
    // relaxed (all of them): each is a number or a flag looked at again every millisecond;
    // none publishes data (the bytes travel in frames, ordered by the completion path), so
    // a stale value only costs one more look, or one chunk past the budget.
    while (over_budget() && !ticket_->cancelled.load(std::memory_order_relaxed) &&
           !give_up_.load(std::memory_order_relaxed)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  bool over_budget() const {
    std::int64_t ahead = ticket_->unsent_bytes.load(std::memory_order_relaxed);
    if (ticket_->front_seq.load(std::memory_order_relaxed) == seq_) {
      ahead -= ticket_->held_bytes.load(std::memory_order_relaxed);  // behind us: not in our way
    }
    return ahead > JobTicket::kUnsentBudget;
  }
  void push(Frame::Kind kind, http::Response r) {
    // Counted before the frame leaves, so the loop, which subtracts what it takes in, never
    // sees the count go below what it holds. relaxed: a budget figure, as above; the loop's
    // subtraction and this addition commute.
    if (ticket_ != nullptr) {
      ticket_->unsent_bytes.fetch_add(static_cast<std::int64_t>(r.body.size()), std::memory_order_relaxed);
    }
    emit_(new Frame{conn_id_, seq_, kind, std::move(r)});
  }
  // [responder.backpressure]
  std::uint64_t conn_id_;
  std::uint64_t seq_;
  JobTicket* ticket_;  // the job's; it outlives the responder (the job holds a reference)
  const std::atomic<bool>& give_up_;
  Emit emit_;
  Progress progress_ = Progress::nothing;
};

}  // namespace handoff::pool
