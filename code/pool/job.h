// pool/job: the unit of work the loop hands a pool thread, and the frames it hands back
// (chapter 01).
// Role: name who a piece of work belongs to (connection id, exchange sequence) so the
// loop can route every frame back to its exchange, or drop it if the connection is gone.
#pragma once

#include <cstdint>
#include <string>

#include "http/request.h"
#include "http/response.h"
#include "http/handler.h"

namespace handoff::pool {

/// A request to run on a pool thread. Owned by the pool thread once submitted; it is
/// deleted there when the handler returns.
struct Job {
  std::uint64_t conn_id = 0;  ///< the connection's id, never reused within a worker
  std::uint64_t seq = 0;      ///< the exchange's sequence number on that connection
  http::Request request;
  const http::Handler* handler = nullptr;
};

/// One piece of a response travelling back to the loop. Owned by the loop once received.
struct Frame {
  enum class Kind : std::uint8_t { whole, stream_head, chunk, end };
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
