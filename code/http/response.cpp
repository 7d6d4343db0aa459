// http/response: a response value and its HTTP/1.1 wire form (chapter 01).
#include "http/response.h"

#include <charconv>

namespace handoff::http {

std::string_view reason_phrase(int status) noexcept {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

namespace {
void append_number(std::string& out, std::size_t n, int base = 10) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n, base);
  out.append(buf, end);
}
}  // namespace

void write_head(std::string& out, int status, std::string_view content_type, const std::vector<Header>& headers,
                Framing framing, std::size_t content_length, std::string_view date, bool keep_alive,
                int version_minor) {
  out.append(version_minor == 0 ? "HTTP/1.0 " : "HTTP/1.1 ");
  append_number(out, static_cast<std::size_t>(status));
  out.push_back(' ');
  out.append(reason_phrase(status));
  out.append("\r\nServer: handoff\r\nDate: ");
  out.append(date);
  if (!content_type.empty()) {
    out.append("\r\nContent-Type: ");
    out.append(content_type);
  }
  for (const Header& h : headers) {
    out.append("\r\n");
    out.append(h.name);
    out.append(": ");
    out.append(h.value);
  }
  if (framing == Framing::content_length) {
    out.append("\r\nContent-Length: ");
    append_number(out, content_length);
  } else if (framing == Framing::chunked) {
    out.append("\r\nTransfer-Encoding: chunked");
  }
  // HTTP/1.1 keeps alive unless told otherwise; HTTP/1.0 closes unless told otherwise.
  if (!keep_alive) {
    out.append("\r\nConnection: close");
  } else if (version_minor == 0) {
    out.append("\r\nConnection: keep-alive");
  }
  out.append("\r\n\r\n");
}

void write_chunk(std::string& out, std::string_view data) {
  if (data.empty()) return;
  append_number(out, data.size(), 16);
  out.append("\r\n");
  out.append(data);
  out.append("\r\n");
}

void write_last_chunk(std::string& out) { out.append("0\r\n\r\n"); }

}  // namespace handoff::http
