// http/request_parser: HTTP/1.1 request parsing over llhttp, with limits (chapter 01).
// Changed in chapter 06: one parsed request held at a time.
// Role: turn the bytes of one connection into complete Requests, in order, or into
// exactly one error status (400, 413, 414, 431, 501, 505) after which the connection closes.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string_view>

#include "http/request.h"

namespace handoff::http {

/// The parser's size limits, each with the status its breach answers.
struct Limits {
  std::size_t max_request_line = std::size_t{8} * 1024;   ///< method + target + version, else 414
  std::size_t max_header_bytes = std::size_t{16} * 1024;  ///< the whole header section, else 431
  std::size_t max_header_fields = 100;                    ///< number of header fields, else 431
  std::size_t max_body_bytes = std::size_t{1024} * 1024;  ///< decoded body, else 413
};

/// One connection's incremental HTTP/1.1 request parser, over llhttp.
class RequestParser {
 public:
  explicit RequestParser(Limits limits = {});
  ~RequestParser();
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  /// Parse the next bytes of the stream. Every request completed by them is appended
  /// to ready(). Parsing stops for good at the first error (see error_status()) or after
  /// a request that does not keep the connection alive; later bytes are ignored.
  void feed(std::string_view bytes);
  /// feed(), stopping at the end of a request once ready() holds `max_ready` or more
  /// (max_ready >= 1), and taking nothing while it already does. Returns how many of
  /// `bytes` it took; the caller keeps the rest and feeds them later. So a connection holds at most `max_ready` parsed requests however
  /// many a single read brought (chapter 06: a pipelined flood parsed whole held ~400
  /// bytes per request). After an error or a closing request every byte counts as taken.
  std::size_t feed_some(std::string_view bytes, std::size_t max_ready);

  /// Completed requests, oldest first. The caller pops them.
  std::deque<Request>& ready();

  /// 0 while no error; else the status to answer with before closing:
  /// 400 malformed (including Content-Length with Transfer-Encoding, two differing
  /// Content-Lengths, Transfer-Encoding in HTTP/1.0 or without chunked as its final
  /// coding, a missing (HTTP/1.1), repeated or invalid Host, a target form the method does
  /// not allow, an empty field name), 413 body too large, 414 request line too long, 431
  /// header section too large or too many fields, 501 an unknown method or a transfer
  /// coding other than chunked before the final chunked, 505 an HTTP major version not 1.
  int error_status() const;
  /// A short human-readable reason for the error ("" while none).
  std::string_view error_reason() const;

  /// True once per request whose head asked for `Expect: 100-continue` and whose body
  /// has not arrived yet; the server then writes "HTTP/1.1 100 Continue" (if it will
  /// read the body). Calling it clears the flag.
  bool take_expect_continue();

  /// True while part of a request's head has been received but not all of it (the
  /// server's header timeout runs while this holds).
  bool head_in_progress() const;
  /// True while any byte of a not-yet-complete request has been received.
  bool request_in_progress() const;
  /// True when parsing has stopped (error, or a request that closes the connection).
  bool stopped() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace handoff::http
