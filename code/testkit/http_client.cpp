// testkit/http_client: a blocking loopback HTTP/1.1 client for end-to-end tests (chapter 01).
#include "testkit/http_client.h"

#include "net/listen_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace handoff::testkit {

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

std::optional<ParsedResponse> Client::read_response(std::chrono::milliseconds limit, bool head_request) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  http::ResponseReader reader({.keep_headers = true,
                               .keep_body = true,
                               .bodiless = [](const void* head, int) { return *static_cast<const bool*>(head); },
                               .context = &head_request});
  // The reader takes what has arrived, then each read as it comes; the bytes stay in
  // buffer_ until a response completes, so leftover() shows them.
  std::size_t fed = 0;
  for (;;) {
    std::size_t used = 0;
    switch (reader.feed(std::string_view(buffer_).substr(fed), used)) {
      case http::ResponseReader::Step::response:
        buffer_.erase(0, fed + used);
        return reader.response();
      case http::ResponseReader::Step::error:
        return std::nullopt;  // malformed response
      case http::ResponseReader::Step::more:
        fed = buffer_.size();
        break;
    }
    if (!fill(deadline)) {
      // EOF may end a body delimited by the close.
      if (reader.finish() != http::ResponseReader::Step::response) return std::nullopt;
      buffer_.clear();
      return reader.response();
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
