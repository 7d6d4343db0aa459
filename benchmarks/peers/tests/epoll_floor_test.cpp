// peers/tests/epoll_floor_test: the floor answers what a load generator sends it (chapter 01).
// Role: run the real epoll-floor binary on loopback port 0 and check the few promises a
// floor makes: one response per request head, pipelined heads answered in order, a head
// split across writes answered once, no response lost when the client reads late, and
// a clean exit on SIGTERM and SIGINT. Every wait has a deadline, so a hang is a failure.
#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef EPOLL_FLOOR_BINARY
#error "EPOLL_FLOOR_BINARY must name the epoll-floor executable"
#endif

namespace handoff::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

int millis_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// The epoll-floor binary as a child process, started on 127.0.0.1 port 0; the constructor
// returns once the child has printed its readiness line.
class FloorProcess {
 public:
  FloorProcess() {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test binary
      ::dup2(out[1], STDOUT_FILENO);
      ::execl(EPOLL_FLOOR_BINARY, EPOLL_FLOOR_BINARY, "--host", "127.0.0.1", "--port", "0",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    stdout_ = out[0];

    const std::string line = read_line(Clock::now() + 10s);
    INFO("readiness line: " << line);
    const std::string prefix = "handoff: listening on http://127.0.0.1:";
    REQUIRE(line.rfind(prefix, 0) == 0);
    port_ = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
    REQUIRE(port_ != 0);
  }
  FloorProcess(const FloorProcess&) = delete;
  FloorProcess& operator=(const FloorProcess&) = delete;
  ~FloorProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) ::close(stdout_);
  }

  std::uint16_t port() const { return port_; }

  // Sends `sig` and waits up to `limit` for the child to exit; returns its wait status,
  // or nothing if it is still running at the deadline.
  std::optional<int> stop_with(int sig, std::chrono::milliseconds limit) {
    REQUIRE(::kill(pid_, sig) == 0);
    const auto deadline = Clock::now() + limit;
    do {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(5ms);
    } while (Clock::now() < deadline);
    return std::nullopt;
  }

 private:
  std::string read_line(Clock::time_point deadline) {
    std::string line;
    for (;;) {
      pollfd p{stdout_, POLLIN, 0};
      const int n = ::poll(&p, 1, millis_left(deadline));
      if (n == 0) FAIL("epoll-floor printed no readiness line in time; got: " << line);
      if (n < 0 && errno == EINTR) continue;
      char c = 0;
      const ssize_t r = ::read(stdout_, &c, 1);
      if (r <= 0) FAIL("epoll-floor closed stdout before its readiness line; got: " << line);
      if (c == '\n') return line;
      line.push_back(c);
    }
  }

  pid_t pid_ = -1;
  int stdout_ = -1;
  std::uint16_t port_ = 0;
};

// A loopback TCP client with deadlines on every read.
class Client {
 public:
  explicit Client(std::uint16_t port, int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::fcntl(fd_, F_SETFL, O_NONBLOCK) == 0);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() { ::close(fd_); }

  void write_all(std::string_view data, Clock::time_point deadline) {
    while (!data.empty()) {
      const ssize_t w = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (w > 0) {
        data.remove_prefix(static_cast<std::size_t>(w));
        continue;
      }
      REQUIRE((w < 0 && (errno == EAGAIN || errno == EINTR)));
      pollfd p{fd_, POLLOUT, 0};
      REQUIRE(::poll(&p, 1, millis_left(deadline)) >= 0);
      REQUIRE(Clock::now() < deadline);
    }
  }

  // Reads until `received` holds at least `bytes` bytes or the deadline passes.
  void read_until(std::size_t bytes, Clock::time_point deadline) {
    while (received.size() < bytes && Clock::now() < deadline) read_some(millis_left(deadline));
  }

  // One read attempt that waits at most `wait_ms`; returns the bytes it added.
  std::size_t read_some(int wait_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return 0;
    char buf[65536];
    const ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
    if (r <= 0) return 0;
    received.append(buf, static_cast<std::size_t>(r));
    return static_cast<std::size_t>(r);
  }

  int fd() const { return fd_; }
  std::string received;

 private:
  int fd_ = -1;
};

struct Response {
  std::string status_line;
  std::string body;
  std::size_t size = 0;  // bytes on the wire, head and body
};

// Parses one response from the front of `wire` (head, then Content-Length bytes of body).
std::optional<Response> parse_response(std::string_view wire) {
  const auto head_end = wire.find("\r\n\r\n");
  if (head_end == std::string_view::npos) return std::nullopt;
  const std::string_view head = wire.substr(0, head_end);
  Response r;
  r.status_line = std::string(head.substr(0, head.find("\r\n")));
  const auto cl = head.find("Content-Length: ");
  if (cl == std::string_view::npos) return std::nullopt;
  const std::size_t length = std::stoul(std::string(head.substr(cl + 16)));
  if (wire.size() < head_end + 4 + length) return std::nullopt;
  r.body = std::string(wire.substr(head_end + 4, length));
  r.size = head_end + 4 + length;
  return r;
}

// Parses every complete response at the front of `wire`.
std::vector<Response> parse_all(std::string_view wire) {
  std::vector<Response> all;
  while (auto r = parse_response(wire)) {
    wire.remove_prefix(r->size);
    all.push_back(std::move(*r));
  }
  return all;
}

const std::string kGet = "GET / HTTP/1.1\r\nHost: floor\r\nUser-Agent: epoll-floor-test\r\n\r\n";

// Reads one response on a fresh connection, to learn its exact bytes.
std::string one_response(std::uint16_t port) {
  Client c(port);
  c.write_all(kGet, Clock::now() + 5s);
  std::optional<Response> r;
  const auto deadline = Clock::now() + 5s;
  while (!(r = parse_response(c.received)) && Clock::now() < deadline) c.read_some(millis_left(deadline));
  REQUIRE(r.has_value());
  return c.received.substr(0, r->size);
}

TEST_CASE("epoll-floor: three pipelined GETs in one write get three 200 responses", "[epoll-floor][ch01]") {
  FloorProcess floor;
  Client c(floor.port());
  c.write_all(kGet + kGet + kGet, Clock::now() + 5s);

  const auto deadline = Clock::now() + 5s;
  std::vector<Response> responses;
  while ((responses = parse_all(c.received)).size() < 3 && Clock::now() < deadline) {
    c.read_some(millis_left(deadline));
  }
  REQUIRE(responses.size() == 3);
  for (const Response& r : responses) {
    CHECK(r.status_line == "HTTP/1.1 200 OK");
    CHECK(r.body == "Hello, World!");
  }
  c.read_some(100);
  CHECK(parse_all(c.received).size() == 3);  // exactly three: nothing else arrives
}

TEST_CASE("epoll-floor: a head split across writes is answered once, after its last byte", "[epoll-floor][ch01]") {
  FloorProcess floor;
  const std::string response = one_response(floor.port());
  Client c(floor.port());

  // Split inside the blank line at each possible point, on one keep-alive connection.
  const std::size_t blank = kGet.size() - 4;
  for (std::size_t cut : {blank + 1, blank + 2, blank + 3, std::size_t{5}}) {
    INFO("split after byte " << cut);
    c.received.clear();
    c.write_all(std::string_view(kGet).substr(0, cut), Clock::now() + 5s);
    c.read_some(100);
    CHECK(c.received.empty());  // no response to half a head
    c.write_all(std::string_view(kGet).substr(cut), Clock::now() + 5s);
    c.read_until(response.size(), Clock::now() + 5s);
    c.read_some(50);
    CHECK(c.received == response);
  }
}

TEST_CASE("epoll-floor: a client that sends 100000 GETs before reading gets every response", "[epoll-floor][ch01]") {
  // Nearly 8 MB of responses, more than a socket's send buffer may grow to (tcp_wmem's
  // maximum is 4 MB by default), to a client with a small receive buffer that reads
  // nothing until its own writes stall: the floor's writes must hit EAGAIN, so this run
  // goes through its buffer-and-EPOLLOUT path and its stop-reading back-pressure.
  FloorProcess floor;
  const std::string response = one_response(floor.port());
  constexpr std::size_t kRequests = 100000;
  std::string requests;
  for (std::size_t i = 0; i < kRequests; ++i) requests += kGet;

  Client c(floor.port(), 4096);
  const auto deadline = Clock::now() + 40s;
  std::string_view unsent = requests;
  bool reading = false;  // read nothing until the writes stall or finish
  while ((!unsent.empty() || c.received.size() < kRequests * response.size()) && Clock::now() < deadline) {
    if (!unsent.empty()) {
      const ssize_t w = ::send(c.fd(), unsent.data(), unsent.size(), MSG_NOSIGNAL);
      if (w > 0) {
        unsent.remove_prefix(static_cast<std::size_t>(w));
      } else {
        REQUIRE((w < 0 && (errno == EAGAIN || errno == EINTR)));
        if (!reading) {
          pollfd p{c.fd(), POLLOUT, 0};
          reading = ::poll(&p, 1, 200) == 0;  // stalled: the floor stopped reading
        }
      }
    } else if (!reading) {
      std::this_thread::sleep_for(200ms);  // let the floor fill its send buffer
      reading = true;
    }
    if (reading) c.read_some(unsent.empty() ? millis_left(deadline) : 10);
  }
  REQUIRE(unsent.empty());
  REQUIRE(c.received.size() == kRequests * response.size());
  for (std::size_t i = 0; i < kRequests; ++i) {
    if (c.received.compare(i * response.size(), response.size(), response) != 0) {
      FAIL("response " << i << " differs from the first");
    }
  }
}

TEST_CASE("epoll-floor: SIGTERM and SIGINT end it with exit status 0", "[epoll-floor][ch01]") {
  for (int sig : {SIGTERM, SIGINT}) {
    INFO("signal " << ::strsignal(sig));
    FloorProcess floor;
    Client idle(floor.port());  // an open connection must not keep it alive
    const std::optional<int> status = floor.stop_with(sig, 5000ms);
    REQUIRE(status.has_value());
    CHECK(WIFEXITED(*status));
    CHECK(WEXITSTATUS(*status) == 0);
  }
}

}  // namespace
}  // namespace handoff::bench
