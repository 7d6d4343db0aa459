// loadgen/response_parser: the statuses of the responses one connection receives (chapter 01).
// Role: turn the bytes one connection receives into a sequence of response statuses, or
// into an error as soon as the bytes cannot be a valid response, so that a malformed
// response is counted at once and never waited on. The reading is the library's strict
// response reader (http/response_reader); this adds what a load generator makes of it.
#pragma once

#include <cstddef>

#include "http/response_reader.h"

namespace handoff::loadgen {

/// Parses the responses arriving on one connection, in order, from chunks of any size
/// (a response may be split anywhere, and one chunk may hold many pipelined responses).
///
/// Guarantee: for every complete final response (Content-Length, chunked, or body until
/// the connection closes) the sink is called exactly once with its status, in arrival
/// order; 1xx interim responses are skipped. feed() returns Outcome::error at the first
/// byte that violates HTTP/1.1 (llhttp in strict mode), and Outcome::closed after a
/// response that ends the connection (Connection: close, HTTP/1.0 without keep-alive):
/// the bytes after that response are not looked at. It keeps neither headers nor body,
/// so it allocates nothing after construction.
class ResponseParser {
 public:
  /// Called once per final response; return false to reject it (the parse then fails
  /// with Outcome::error), e.g. when no request was waiting for it.
  using Sink = bool (*)(void* context, int status);

  enum class Outcome {
    ok,      ///< all bytes consumed; more responses may follow
    closed,  ///< a response ended the connection; no more responses on it
    error,   ///< the bytes are not a valid response stream (see error_reason())
  };

  /// `head_requests`: the responses answer HEAD requests, so they have no body whatever
  /// their Content-Length says.
  ResponseParser(Sink sink, void* context, bool head_requests = false) noexcept;

  /// Parse the next bytes of the stream.
  Outcome feed(const char* data, std::size_t size) noexcept;

  /// The peer closed the connection. Completes a response whose body runs to the end of
  /// the connection (closed); a response cut short is an error; between responses, ok.
  Outcome finish() noexcept;

  /// Start over for a new connection.
  void reset() noexcept;

  /// True between responses (no response has begun and not finished).
  bool idle() const noexcept { return reader_.idle(); }

  /// The reason for the error (llhttp's, or the sink's refusal), after Outcome::error.
  const char* error_reason() const noexcept;

 private:
  /// What the response the reader just completed means for the connection.
  Outcome take() noexcept;

  http::ResponseReader reader_;
  Sink sink_;
  void* context_;
  bool closed_ = false;
  bool failed_ = false;
  bool refused_ = false;  // the sink refused a response
};

}  // namespace handoff::loadgen
