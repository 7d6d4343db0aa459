// http/response: a response value and its HTTP/1.1 wire form (chapter 01).
// Role: the one place that knows how a status line, the headers, a Content-Length body
// and a chunked stream are written, so every dispatch path frames bytes the same way.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "http/request.h"

namespace handoff::http {

/// A whole response: status, type, extra headers and the body (sent with Content-Length).
struct Response {
  int status = 200;
  std::string content_type = "text/plain";
  std::vector<Header> headers;
  std::string body;
};

/// The standard reason phrase for `status` ("Unknown" when we do not know it).
std::string_view reason_phrase(int status) noexcept;

/// How the body that follows a head is delimited.
/// until_close is for HTTP/1.0 clients, which cannot read chunked: the body ends when
/// the server closes the connection.
enum class Framing { content_length, chunked, until_close };

/// Append the status line and headers (ending with the blank line) to `out`.
/// `date` is the cached Date header value; `keep_alive` decides `Connection:`.
/// With Framing::content_length the head carries `Content-Length: content_length`.
void write_head(std::string& out, int status, std::string_view content_type, const std::vector<Header>& headers,
                Framing framing, std::size_t content_length, std::string_view date, bool keep_alive, int version_minor);

/// Append one chunk of a chunked body (`size CRLF data CRLF`); an empty `data` writes nothing
/// (a zero-size chunk would end the body).
void write_chunk(std::string& out, std::string_view data);

/// Append the last chunk that ends a chunked body.
void write_last_chunk(std::string& out);

/// The interim response to `Expect: 100-continue`.
inline constexpr std::string_view k100Continue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace handoff::http
