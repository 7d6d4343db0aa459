// pool/job: the unit of work the loop hands a pool thread, and the frames it hands back
// (chapter 01).
// Role: name who a piece of work belongs to (connection id, exchange sequence) so the
// loop can route every frame back to its exchange, or drop it if the connection is gone.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "http/request.h"
#include "http/response.h"
#include "http/handler.h"

namespace handoff::pool {

/// What a connection shares with every job it has handed to a pool. The connection (loop
/// thread) and the pool threads running its jobs each hold a reference, so it outlives
/// whichever lets go last.
struct JobTicket {
  /// Raised by the loop when the connection closes. A pool thread that has not started a
  /// job yet skips it; a streaming handler stops waiting for room. relaxed on both sides:
  /// a late look only costs one job run for nobody, it orders no other data.
  std::atomic<bool> cancelled{false};
  /// Response payload bytes the connection holds for this client and has not yet written
  /// (published by the loop after each change), plus those pool threads have emitted and
  /// the loop has not yet taken in. A streaming handler waits while this is over budget.
  std::atomic<std::int64_t> unsent_bytes{0};
  /// Above this many unsent bytes a connection stops reading and a streaming handler
  /// waits: the bound on what one client that does not read can make the server hold.
  static constexpr std::int64_t kUnsentBudget = std::int64_t{1} << 20;
};

/// A request to run on a pool thread. Owned by the pool thread once submitted; it is
/// deleted there when the handler returns.
struct Job {
  std::uint64_t conn_id = 0;  ///< the connection's id, never reused within a worker
  std::uint64_t seq = 0;      ///< the exchange's sequence number on that connection
  http::Request request;
  const http::Handler* handler = nullptr;
  std::shared_ptr<JobTicket> ticket;  ///< the connection's; null in component tests
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
/// `emit` (the pool's completion path).
template <class Emit>
class FrameResponder final : public http::Responder {
 public:
  FrameResponder(const Job& job, Emit emit) : conn_id_(job.conn_id), seq_(job.seq), emit_(std::move(emit)) {}
  void send(http::Response r) override { push(Frame::Kind::whole, std::move(r)); }
  void start_stream(int status, std::string content_type) override {
    http::Response r;
    r.status = status;
    r.content_type = std::move(content_type);
    push(Frame::Kind::stream_head, std::move(r));
  }
  void send_chunk(std::string data) override {
    http::Response r;
    r.body = std::move(data);
    push(Frame::Kind::chunk, std::move(r));
  }
  void end_stream() override { push(Frame::Kind::end, {}); }

 private:
  void push(Frame::Kind kind, http::Response r) { emit_(new Frame{conn_id_, seq_, kind, std::move(r)}); }
  std::uint64_t conn_id_;
  std::uint64_t seq_;
  Emit emit_;
};

}  // namespace handoff::pool
