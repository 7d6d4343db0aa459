// http/response_reader: strict, incremental reading of HTTP/1.1 responses over llhttp (chapter 01).
// Role: the one response reader of the project. The server never reads a response; its
// clients do: the test kit's client, the load generator and the connection fuzzer's
// oracle. It stops at the end of each response, so the caller learns where each one
// ends, to the byte, and fails at the first byte that cannot be a response (strict mode).
#pragma once

#include <llhttp.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "http/request.h"

namespace handoff::http {

/// One response as the reader parsed it.
struct ParsedResponse {
  int status = 0;
  int version_minor = 1;
  bool keep_alive = true;
  std::vector<Header> headers;  // empty unless the reader keeps headers
  std::string body;             // de-chunked; empty unless the reader keeps bodies
  /// The first header called `name` (ASCII case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

/// Reads the responses arriving on one connection, in order, from chunks of any size (a
/// response may be split anywhere, and one chunk may hold many pipelined responses).
///
/// Guarantee: feed() parses up to the end of the next complete response (interim 1xx
/// responses included) and says where it ended; its status, version, keep-alive verdict
/// and, if asked, headers and body are in response() until the next one begins. It
/// returns Step::error at the first byte that violates HTTP/1.1 (llhttp in strict mode),
/// bytes after a response that ended the connection included. Cost: llhttp's fixed-size
/// state; it allocates only to keep headers or bodies, when asked to.
class ResponseReader {
 public:
  /// Asked at the end of each response's head: whether this response has no body whatever
  /// its framing says (it answers a HEAD request).
  using Bodiless = bool (*)(const void* context, int status);

  struct Options {
    bool keep_headers = false;
    bool keep_body = false;
    Bodiless bodiless = nullptr;  ///< null: every response is framed as it says
    const void* context = nullptr;
  };

  enum class Step {
    more,      ///< every byte was taken and no response completed
    response,  ///< a response completed; response() holds it
    error,     ///< the bytes are not a valid response stream (see error_reason())
  };

  /// Keeps neither headers nor bodies; every response is framed as it says.
  ResponseReader() noexcept;
  explicit ResponseReader(Options options) noexcept;

  /// Parse `bytes` up to the end of the next response. `used` says how many were taken:
  /// all of them (Step::more), those up to the end of the response (Step::response), or
  /// those before the fault (Step::error).
  Step feed(std::string_view bytes, std::size_t& used);
  /// The peer closed the connection: a response whose body runs to the close completes
  /// (Step::response); between responses, Step::more; a response cut short, Step::error.
  Step finish();
  /// Start over for a new connection.
  void reset() noexcept;

  /// The last response completed (or the one being read).
  const ParsedResponse& response() const noexcept { return response_; }
  /// True between responses (no response has begun and not finished).
  bool idle() const noexcept { return !in_message_; }
  /// llhttp's name and reason for the error, after Step::error.
  const char* error_reason() const noexcept;

 private:
  static int on_message_begin(llhttp_t* parser);
  static int on_header_field(llhttp_t* parser, const char* at, std::size_t length);
  static int on_header_field_complete(llhttp_t* parser);
  static int on_header_value(llhttp_t* parser, const char* at, std::size_t length);
  static int on_headers_complete(llhttp_t* parser);
  static int on_body(llhttp_t* parser, const char* at, std::size_t length);
  static int on_message_complete(llhttp_t* parser);
  static ResponseReader& of(llhttp_t* parser) noexcept { return *static_cast<ResponseReader*>(parser->data); }

  llhttp_t parser_{};
  Options options_;
  ParsedResponse response_;
  bool name_done_ = true;  // the last header's name is complete: a field span starts a new one
  bool in_message_ = false;
  bool complete_ = false;  // on_message_complete paused the parser
  bool failed_ = false;
};

}  // namespace handoff::http
