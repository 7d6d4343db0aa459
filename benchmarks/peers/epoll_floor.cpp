// peers/epoll_floor: the minimal epoll responder, the floor under every server table (chapter 01).
// Role: answer keep-alive GETs with a fixed "Hello, World!" at the least CPU a Linux HTTP
// responder can spend, so that each measured table carries the cost of the bare kernel path
// (accept, read, write, epoll) beside our stages and nginx.
//
// This is a floor, not a server. One thread, one epoll set, level-triggered. It does not
// parse HTTP: it counts request heads by finding the blank line "\r\n\r\n" (carrying a
// partly seen blank line from one read to the next) and writes one fixed response per
// head, so pipelined heads get their responses in one write. It assumes GET without a
// body, never closes a connection of its own accord, ignores "Connection: close", and
// keeps no request bytes at all. What it does take care of is the part every real server
// must: a write that would block is buffered and finished on EPOLLOUT, and while output is
// pending it stops reading that connection, so a client that pipelines without reading
// cannot make it buffer without bound.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/command_line.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace handoff::bench {
namespace {

constexpr std::string_view kResponse =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "Hello, World!";

// Counts request heads in a byte stream by their terminating blank line. `matched_` is how
// much of "\r\n\r\n" the bytes so far end with (0..3), which is all that must survive
// from one read to the next.
class HeadCounter {
 public:
  std::size_t feed(const char* data, std::size_t n) {
    static constexpr char kBlankLine[] = "\r\n\r\n";
    std::size_t heads = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const char c = data[i];
      if (c == kBlankLine[matched_]) {
        if (++matched_ == 4) {
          ++heads;
          matched_ = 0;
        }
      } else {
        // A mismatch can only restart the pattern with a '\r'.
        matched_ = c == '\r' ? 1 : 0;
      }
    }
    return heads;
  }

 private:
  int matched_ = 0;
};

struct Connection {
  int fd = -1;
  HeadCounter heads;
  std::string out;           // responses not yet written
  std::size_t out_sent = 0;  // how much of `out` the kernel has taken
  bool waiting_for_out = false;
};

class Floor {
 public:
  Floor(const std::string& host, std::uint16_t port) {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) throw_errno("epoll_create1");
    open_listener(host, port);
    open_signals();
  }
  Floor(const Floor&) = delete;
  Floor& operator=(const Floor&) = delete;
  ~Floor() {
    for (auto& c : conns_) {
      if (c) ::close(c->fd);
    }
    if (signals_ >= 0) ::close(signals_);
    if (listener_ >= 0) ::close(listener_);
    if (epoll_ >= 0) ::close(epoll_);
  }

  const std::string& url() const { return url_; }

  // Runs until SIGINT or SIGTERM arrives.
  void run() {
    std::vector<epoll_event> events(256);
    for (;;) {
      const int n = ::epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), -1);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_errno("epoll_wait");
      }
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == signals_) return;
        if (fd == listener_) {
          accept_all();
        } else {
          on_connection(fd, events[i].events);
        }
      }
    }
  }

 private:
  [[noreturn]] static void throw_errno(const char* what) {
    throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
  }

  void watch(int fd, std::uint32_t events, int op) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_, op, fd, &ev) != 0) throw_errno("epoll_ctl");
  }

  void open_listener(const std::string& host, std::uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
      throw std::runtime_error("cannot resolve " + host + ": " + ::gai_strerror(rc));
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(found, &::freeaddrinfo);
    listener_ = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listener_ < 0) throw_errno("socket");
    const int one = 1;
    ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listener_, found->ai_addr, found->ai_addrlen) != 0) throw_errno("bind");
    if (::listen(listener_, SOMAXCONN) != 0) throw_errno("listen");

    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (::getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
      throw_errno("getsockname");
    }
    char numeric_host[NI_MAXHOST];
    char numeric_port[NI_MAXSERV];
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, numeric_host, sizeof numeric_host, numeric_port,
                      sizeof numeric_port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
      throw std::runtime_error("getnameinfo failed");
    }
    const bool v6 = bound.ss_family == AF_INET6;
    url_ = std::string("http://") + (v6 ? "[" : "") + numeric_host + (v6 ? "]" : "") + ":" + numeric_port;
    watch(listener_, EPOLLIN, EPOLL_CTL_ADD);
  }

  // SIGINT and SIGTERM arrive as a readable fd in the same epoll set, so stopping is one
  // more event rather than a handler racing the loop.
  void open_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    if (::pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) throw_errno("pthread_sigmask");
    signals_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signals_ < 0) throw_errno("signalfd");
    watch(signals_, EPOLLIN, EPOLL_CTL_ADD);
  }

  void accept_all() {
    for (;;) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        // EAGAIN: the backlog is empty. Anything else (EMFILE, ENOBUFS): a floor does not
        // shed load; the listener stays readable and is retried on the next pass.
        return;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (static_cast<std::size_t>(fd) >= conns_.size()) conns_.resize(static_cast<std::size_t>(fd) + 1);
      conns_[static_cast<std::size_t>(fd)] = std::make_unique<Connection>();
      conns_[static_cast<std::size_t>(fd)]->fd = fd;
      watch(fd, EPOLLIN, EPOLL_CTL_ADD);
    }
  }

  void on_connection(int fd, std::uint32_t events) {
    if (static_cast<std::size_t>(fd) >= conns_.size() || !conns_[static_cast<std::size_t>(fd)]) return;
    Connection& c = *conns_[static_cast<std::size_t>(fd)];
    if (c.waiting_for_out) {
      // Only EPOLLOUT is asked for; an error or hang-up shows up as a failed write.
      if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) flush(c);
      return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) read_heads(c);
  }

  void read_heads(Connection& c) {
    char buf[16384];
    std::size_t heads = 0;
    for (;;) {
      const ssize_t r = ::read(c.fd, buf, sizeof buf);
      if (r > 0) {
        heads += c.heads.feed(buf, static_cast<std::size_t>(r));
        // A short read drained the socket; a full one may have left more behind.
        if (static_cast<std::size_t>(r) < sizeof buf) break;
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EAGAIN) break;
      close_connection(c);  // EOF or a reset
      return;
    }
    if (heads == 0) return;
    for (std::size_t i = 0; i < heads; ++i) c.out.append(kResponse);
    flush(c);
  }

  void flush(Connection& c) {
    while (c.out_sent < c.out.size()) {
      const ssize_t w = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
      if (w >= 0) {
        c.out_sent += static_cast<std::size_t>(w);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        // The socket buffer is full: finish on EPOLLOUT, and read nothing more meanwhile.
        if (!c.waiting_for_out) {
          c.waiting_for_out = true;
          watch(c.fd, EPOLLOUT, EPOLL_CTL_MOD);
        }
        return;
      }
      close_connection(c);
      return;
    }
    c.out.clear();
    c.out_sent = 0;
    if (c.waiting_for_out) {
      c.waiting_for_out = false;
      watch(c.fd, EPOLLIN, EPOLL_CTL_MOD);
    }
  }

  void close_connection(Connection& c) {
    const int fd = c.fd;
    ::close(fd);  // also removes it from the epoll set
    conns_[static_cast<std::size_t>(fd)].reset();
  }

  int epoll_ = -1;
  int listener_ = -1;
  int signals_ = -1;
  std::string url_;
  std::vector<std::unique_ptr<Connection>> conns_;  // indexed by fd
};

int run(int argc, char** argv) {
  handoff::config::CommandLine cli{"epoll-floor: the minimal epoll responder (a floor for the tables, not a server)"};
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  cli.add_option("--host", host, "Address to listen on");
  cli.add_option("--port", port, "Port to listen on (0: any free port)");
  if (const auto status = cli.parse(argc, argv)) return *status;
  ::pthread_setname_np(::pthread_self(), "floor-0");
  try {
    Floor floor(host, port);
    std::printf("handoff: listening on %s\n", floor.url().c_str());
    std::fflush(stdout);
    floor.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "epoll-floor: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
