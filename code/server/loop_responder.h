// server/loop_responder: the Responder of a handler that runs on the loop thread, inline or
// as a coroutine, and the answer for one that fails (chapter 01; coroutines, chapter 04).
// Changed in chapter 04: the answer of a coroutine route.
// Role: apply each call to the exchange at once, remember how far the answer got, and end
// the exchange of a handler that threw or returned without answering the same way
// wherever on the loop it ran: a 500, or, if its stream had begun, an abort.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "http/handler.h"
#include "http/request.h"
#include "pool/job.h"
#include "stats/thread_stats.h"

namespace handoff::server {

/// What went wrong with a handler that has returned (`error`: what it threw, or null),
/// or an empty string when nothing did.
std::string handler_failure(std::exception_ptr error, bool answered);
/// Count and log a handler's failure.
void report_handler_failure(const http::Request& request, const std::string& failure, stats::ThreadStats& stats);

/// The Responder a handler on the loop thread answers through.
///
/// `Apply` is called as apply(pool::Frame::Kind, http::Response&&) for each piece of the
/// answer: the inline path applies it to its connection, a coroutine's routes it by
/// connection id and exchange sequence (the connection may have gone while it waited).
template <class Apply>
class LoopResponder final : public http::Responder {
 public:
  enum class State { nothing, streaming, answered };
  explicit LoopResponder(Apply apply) : apply_(std::move(apply)) {}
  State state() const noexcept { return state_; }

  void send(http::Response r) override {
    state_ = State::answered;
    apply_(pool::Frame::Kind::whole, std::move(r));
  }
  void start_stream(int status, std::string content_type) override {
    state_ = State::streaming;
    http::Response r;
    r.status = status;
    r.content_type = std::move(content_type);
    apply_(pool::Frame::Kind::stream_head, std::move(r));
  }
  void send_chunk(std::string data) override {
    http::Response r;
    r.body = std::move(data);
    apply_(pool::Frame::Kind::chunk, std::move(r));
  }
  void end_stream() override {
    state_ = State::answered;
    apply_(pool::Frame::Kind::end, {});
  }

  /// The handler has returned, or thrown `error`. A handler that throws, or returns without
  /// answering, must not end the process or leave its exchange open for ever: answer 500,
  /// or, if its stream had begun, end the stream unterminated and close (the client sees a
  /// truncated answer, never a false end). An answer already sent stands.
  void finish(std::exception_ptr error, const http::Request& request, stats::ThreadStats& stats) {
    const std::string failure = handler_failure(std::move(error), state_ == State::answered);
    if (failure.empty()) return;
    report_handler_failure(request, failure, stats);
    if (state_ == State::streaming) {
      apply_(pool::Frame::Kind::abort, {});
    } else if (state_ == State::nothing) {
      http::Response r;
      r.status = 500;
      r.body = std::string(http::reason_phrase(500)) + "\n";
      apply_(pool::Frame::Kind::whole, std::move(r));
    }
    state_ = State::answered;
  }

 private:
  Apply apply_;
  State state_ = State::nothing;
};

}  // namespace handoff::server
