// loadgen/tests/test_server: a minimal in-test HTTP/1.1 responder on 127.0.0.1, port 0 (chapter 01).
// Role: a server whose behaviour each loadgen test chooses (answer, answer chunked, answer
// garbage, stay silent, close after each answer, stall once), on its own thread, with
// every wait bounded so that a broken test fails instead of hanging.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <strings.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace handoff::loadgen::testing {

/// One thread, one poll() loop over the listener and its clients. Requests may be
/// pipelined and carry a Content-Length body; each is answered in order.
///
/// Guarantee: the stall, when configured, happens exactly once, on the first request
/// handled at least stall_after_ms after the first request of all, and blocks the whole
/// server (every connection) for stall_ms. The destructor stops and joins the thread
/// within a few milliseconds.
class TestServer {
 public:
  enum class Reply { ok, chunked, malformed, silent, close_each, status_503 };
  struct Options {
    Reply reply = Reply::ok;
    int stall_ms = 0;
    int stall_after_ms = 0;
  };

  explicit TestServer(Options options) : options_(options) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 128) != 0) {
      throw std::runtime_error("test server: bind/listen failed");
    }
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~TestServer() {
    stop();
    for (auto& c : clients_) ::close(c.fd);
    ::close(listener_);
  }

  /// Stop serving and join the server thread: after it the counters no longer move, so two
  /// of them read together are one consistent snapshot. The connections stay open until the
  /// destructor.
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::uint64_t requests_seen() const { return requests_.load(); }
  std::uint64_t body_bytes_seen() const { return body_bytes_.load(); }
  bool stalled() const { return stalled_.load(); }

 private:
  struct Client {
    int fd;
    std::string in;
  };

  void serve() {
    std::vector<pollfd> fds;
    char buf[16384];
    while (!stop_.load()) {
      fds.clear();
      fds.push_back({listener_, POLLIN, 0});
      for (const auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 5) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          const int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_.push_back({fd, {}});
        }
      }
      // Walk the polled clients (those accepted just now are polled next turn).
      std::vector<int> gone;
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Client& c = clients_[i - 1];
        const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
        if (n <= 0) {
          gone.push_back(c.fd);
          continue;
        }
        c.in.append(buf, static_cast<std::size_t>(n));
        if (!answer(c)) gone.push_back(c.fd);
      }
      for (const int fd : gone) {
        ::close(fd);
        std::erase_if(clients_, [fd](const Client& c) { return c.fd == fd; });
      }
    }
  }

  // Answer every complete request in c.in; false when the connection must close.
  bool answer(Client& c) {
    for (;;) {
      const std::size_t end = c.in.find("\r\n\r\n");
      if (end == std::string::npos) return true;
      std::size_t body = 0;
      const std::string head = c.in.substr(0, end);
      for (std::size_t at = 0; at < head.size();) {
        const std::size_t eol = std::min(head.find("\r\n", at), head.size());
        const std::string line = head.substr(at, eol - at);
        if (line.size() > 15 && strncasecmp(line.c_str(), "content-length:", 15) == 0) {
          body = std::strtoull(line.c_str() + 15, nullptr, 10);
        }
        at = eol + 2;
      }
      if (c.in.size() < end + 4 + body) return true;
      c.in.erase(0, end + 4 + body);
      body_bytes_ += body;
      ++requests_;
      maybe_stall();
      switch (options_.reply) {
        case Reply::ok:
          send_all(c.fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
          break;
        case Reply::chunked:  // head and chunks in separate segments
          send_all(c.fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
          send_all(c.fd, "5\r\nhello\r\n");
          send_all(c.fd, "6\r\n world\r\n0\r\n\r\n");
          break;
        case Reply::malformed:
          send_all(c.fd, "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n");
          break;
        case Reply::silent:
          break;
        case Reply::close_each:
          send_all(c.fd, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
          return false;
        case Reply::status_503:
          send_all(c.fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
          break;
      }
    }
  }

  void maybe_stall() {
    const auto now = std::chrono::steady_clock::now();
    if (!first_seen_) {
      first_seen_ = true;
      first_ = now;
    }
    if (options_.stall_ms > 0 && !stalled_.load() &&
        now - first_ >= std::chrono::milliseconds(options_.stall_after_ms)) {
      stalled_.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(options_.stall_ms));
    }
  }

  static void send_all(int fd, const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }

  Options options_;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::vector<Client> clients_;  // owned by the server thread until the join
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> body_bytes_{0};
  std::atomic<bool> stalled_{false};
  bool first_seen_ = false;
  std::chrono::steady_clock::time_point first_{};
  std::thread thread_;
};

/// Run `f` on its own thread and wait at most `limit`; a hang becomes a message and an
/// abort (the test fails with a name) instead of a stuck test binary.
template <class F>
auto bounded(std::chrono::milliseconds limit, const char* what, F f) -> decltype(f()) {
  std::packaged_task<decltype(f())()> task(std::move(f));
  auto result = task.get_future();
  std::thread runner(std::move(task));
  if (result.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "%s: did not finish within %lld ms\n", what, static_cast<long long>(limit.count()));
    std::abort();
  }
  runner.join();
  return result.get();
}

}  // namespace handoff::loadgen::testing
