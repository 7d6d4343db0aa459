// testkit/http_client: a blocking loopback HTTP/1.1 client for end-to-end tests (chapter 01).
// Role: send exact bytes (whole, split, one at a time) and read back strictly parsed
// responses (http/response_reader), with a deadline on every read.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "http/response_reader.h"
#include "net/fd.h"

namespace handoff::testkit {

/// One response as the client parsed it, headers and (de-chunked) body kept.
using ParsedResponse = http::ParsedResponse;

using namespace std::chrono_literals;

/// A blocking loopback HTTP/1.1 client with a deadline on every read.
class Client {
 public:
  /// Connect to 127.0.0.1:port. Throws on failure.
  explicit Client(int port);
  /// Connect to host:port (an IPv4 or IPv6 literal, `::1`, or a name). Throws on failure.
  Client(const std::string& host, int port);

  /// Write all of `bytes` (blocking, bounded by the socket's send timeout).
  void send(std::string_view bytes);
  /// Write `bytes` one byte per send().
  void send_bytewise(std::string_view bytes);
  /// Shut our write side (the server sees EOF).
  void shutdown_write();
  /// Close abortively: SO_LINGER with a zero timeout makes the kernel send a reset.
  void reset();

  /// Read and parse the next response; nullopt if none completed within `limit` or the
  /// connection closed first. `head_request` says the request was HEAD (no body follows).
  std::optional<ParsedResponse> read_response(std::chrono::milliseconds limit = 5000ms, bool head_request = false);
  /// Wait until at least `n` bytes have arrived and not yet been parsed; false on timeout
  /// or close. The bytes stay buffered for read_response().
  bool await_bytes(std::size_t n, std::chrono::milliseconds limit = 5000ms);
  /// True if the server closed the connection (EOF or reset) within `limit`, after
  /// discarding anything it still sent.
  bool closed_by_peer(std::chrono::milliseconds limit = 5000ms);
  /// Bytes received but not yet consumed by a parsed response.
  const std::string& leftover() const noexcept { return buffer_; }

 private:
  /// Read more bytes into buffer_ within the deadline; false on EOF, error or timeout.
  bool fill(std::chrono::steady_clock::time_point deadline);
  net::Fd fd_;
  std::string buffer_;
};

}  // namespace handoff::testkit
