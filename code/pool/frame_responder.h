// pool/frame_responder: the Responder a pool thread hands a handler, each call one Frame
// (chapter 01; beside its one user, pool/run_job, since issue 26).
// Role: turn a handler's answer (whole, or streamed in chunks) into the frames the loop
// routes back to the exchange, keep how far the handler got so that a failure is still
// answered, and hold a streaming handler back while its connection's unsent bytes are over
// the ticket's budget.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>

#include "http/handler.h"
#include "http/response.h"
#include "pool/job.h"

namespace handoff::pool {

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
    return ahead > ticket_->unsent_budget;
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
