// testkit/http_client: a blocking loopback HTTP/1.1 client for end-to-end tests (chapter 01).
#include "testkit/http_client.h"

#include "http/ascii.h"
#include "net/listen_address.h"

#include <arpa/inet.h>
#include <llhttp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace handoff::testkit {

const std::string* ParsedResponse::header(std::string_view name) const {
  for (const auto& h : headers) {
    if (http::ascii_iequals(h.name, name)) return &h.value;
  }
  return nullptr;
}

Client::Client(int port) : Client("127.0.0.1", port) {}

Client::Client(const std::string& host, int port) {
  const net::ListenAddress to = net::ListenAddress::resolve(host, static_cast<std::uint16_t>(port));
  fd_.reset(::socket(to.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd_) throw std::runtime_error("socket failed");
  timeval tv{5, 0};
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd_.get(), to.sockaddr_ptr(), to.length) != 0) {
    throw std::runtime_error("connect to " + to.text() + " failed: " + std::strerror(errno));
  }
}

void Client::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error(std::string("send failed: ") + std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void Client::send_bytewise(std::string_view bytes) {
  for (char c : bytes) send(std::string_view(&c, 1));
}

void Client::shutdown_write() { ::shutdown(fd_.get(), SHUT_WR); }

void Client::reset() {
  const linger abort{1, 0};
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  fd_.reset();
}

bool Client::fill(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd_.get(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buf[16384];
  const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
  if (n <= 0) return false;
  buffer_.append(buf, static_cast<std::size_t>(n));
  return true;
}

namespace {
/// What llhttp's callbacks build while they parse one response.
struct ParseState {
  ParsedResponse response;
  std::string field;
  bool in_value = false;
  bool head_request = false;
  bool complete = false;
};

ParseState& state(llhttp_t* p) { return *static_cast<ParseState*>(p->data); }

int on_header_field(llhttp_t* p, const char* at, std::size_t len) {
  auto& s = state(p);
  if (s.in_value) {
    s.field.clear();
    s.in_value = false;
  }
  s.field.append(at, len);
  return 0;
}
int on_header_value(llhttp_t* p, const char* at, std::size_t len) {
  auto& s = state(p);
  if (!s.in_value) {
    s.response.headers.push_back({s.field, ""});
    s.in_value = true;
  }
  s.response.headers.back().value.append(at, len);
  return 0;
}
int on_headers_complete(llhttp_t* p) {
  auto& s = state(p);
  s.response.status = llhttp_get_status_code(p);
  s.response.version_minor = llhttp_get_http_minor(p);
  return s.head_request ? 1 : 0;  // 1: this response has no body
}
int on_body(llhttp_t* p, const char* at, std::size_t len) {
  state(p).response.body.append(at, len);
  return 0;
}
int on_message_complete(llhttp_t* p) {
  auto& s = state(p);
  s.complete = true;
  s.response.keep_alive = llhttp_should_keep_alive(p) != 0;
  return HPE_PAUSED;  // stop right after this message so the rest stays buffered
}
}  // namespace

std::optional<ParsedResponse> Client::read_response(std::chrono::milliseconds limit, bool head_request) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  settings.on_header_field = on_header_field;
  settings.on_header_value = on_header_value;
  settings.on_headers_complete = on_headers_complete;
  settings.on_body = on_body;
  settings.on_message_complete = on_message_complete;
  for (;;) {
    // Re-parse the whole buffer each time: simple, and tests are small.
    ParseState s;
    s.head_request = head_request;
    llhttp_t parser;
    llhttp_init(&parser, HTTP_RESPONSE, &settings);
    parser.data = &s;
    const llhttp_errno_t err = llhttp_execute(&parser, buffer_.data(), buffer_.size());
    if (s.complete) {
      const char* stop = llhttp_get_error_pos(&parser);
      buffer_.erase(0, static_cast<std::size_t>(stop - buffer_.data()));
      return std::move(s.response);
    }
    if (err != HPE_OK) return std::nullopt;  // malformed response
    if (!fill(deadline)) {
      // EOF may end a body delimited by the close.
      if (llhttp_message_needs_eof(&parser) && llhttp_finish(&parser) == HPE_PAUSED && s.complete) {
        buffer_.clear();
        return std::move(s.response);
      }
      return std::nullopt;
    }
  }
}

bool Client::await_bytes(std::size_t n, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (buffer_.size() < n) {
    if (!fill(deadline)) return false;
  }
  return true;
}

bool Client::closed_by_peer(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    char buf[4096];
    const ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    if (n < 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

}  // namespace handoff::testkit
