// chapters/06-full-system/tests/pressure_test.cpp: stage 06 under memory pressure and slow
// bodies (issue 38), through the real binary: a pipelined flood whose clients close keeps
// RSS within the bound the README states (connections x per-connection cap + fixed),
// during and after; under an address-space limit a connection whose memory cannot be had
// is closed and the server serves on; a body trickled below --body-min-rate gets 408 (chapter 06).
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "net/fd.h"
#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::net::Fd;
using handoff::testkit::Client;
using handoff::testkit::dispatch_args;
using handoff::testkit::get;
using handoff::testkit::repeat;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

void served(int port) {
  Client c(port);
  c.send(get("/"));
  auto r = c.read_response(5000ms);
  REQUIRE(r);
  CHECK(r->status == 200);
}

/// A non-blocking loopback connection to `port`.
Fd connect_nonblocking(int port) {
  Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  REQUIRE(fd);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  REQUIRE((rc == 0 || errno == EINPROGRESS));
  return fd;
}

/// The flood: `conns` connections each write `burst` (as much as the kernel takes, within
/// `stall` without progress) and never read. Returns the connections, still open.
std::vector<Fd> flood(int port, int conns, const std::string& burst, std::chrono::milliseconds stall) {
  std::vector<Fd> fds;
  std::vector<std::size_t> sent(static_cast<std::size_t>(conns), 0);
  for (int i = 0; i < conns; ++i) fds.push_back(connect_nonblocking(port));
  auto last_progress = Clock::now();
  while (Clock::now() - last_progress < stall) {
    bool all = true;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (sent[i] == burst.size()) continue;
      all = false;
      const ssize_t n = ::send(fds[i].get(), burst.data() + sent[i], burst.size() - sent[i], MSG_NOSIGNAL);
      if (n > 0) {
        sent[i] += static_cast<std::size_t>(n);
        last_progress = Clock::now();
      }
    }
    if (all) break;
    std::this_thread::sleep_for(1ms);
  }
  return fds;
}

}  // namespace

// The README's bound, per connection: --read-ahead-bytes of unparsed input, one parsed
// request (at most --max-request-line + --max-header-bytes of head; these GETs have no
// body), --max-unsent-bytes of answers plus the one being made, and the connection's own
// state. Small settings make the bound tight enough that the broken parser (a whole read
// parsed at once, ~400 bytes a request) breaks it several times over.
TEST_CASE("stage 06: a pipelined flood that closes keeps RSS within connections x per-connection cap + fixed",
          "[stage][adversarial][ch06]") {
  const std::string dispatch = GENERATE("inline", "pool");
  constexpr long kReadAhead = 16 * 1024, kUnsent = 16 * 1024;
  StageProcess stage(stage_binary(),
                     dispatch_args(dispatch, {"--read-ahead-bytes", std::to_string(kReadAhead), "--max-unsent-bytes",
                                              std::to_string(kUnsent)}));
  served(stage.port());
  const long fixed = stage.rss_kib();
  constexpr int kConns = 200;
  constexpr long kHead = 8 * 1024 + 16 * 1024;  // the default --max-request-line + --max-header-bytes
  constexpr long kAnswer = 4 * 1024, kOwnState = 16 * 1024;
  const long per_conn_kib = (kReadAhead + kHead + kUnsent + kAnswer + kOwnState) / 1024;
  const long allocator_slack_kib = 8 * 1024;  // malloc's arenas and free lists
  const long bound = fixed + kConns * per_conn_kib + allocator_slack_kib;
  long peak = 0;
  {
    auto fds = flood(stage.port(), kConns, repeat(get("/"), 2000), 500ms);  // ~54 KB each
    for (int i = 0; i < 20; ++i) {  // during: held open, the server working through them
      peak = std::max(peak, stage.rss_kib());
      std::this_thread::sleep_for(10ms);
    }
  }  // closed with answers unread: each client's kernel resets its connection
  for (int i = 0; i < 50; ++i) {  // closing
    peak = std::max(peak, stage.rss_kib());
    std::this_thread::sleep_for(10ms);
  }
  served(stage.port());
  const long after = stage.rss_kib();
  INFO("RSS: fixed " << fixed << " KiB, peak " << peak << " KiB, after " << after << " KiB, bound " << bound
                     << " KiB");
#if defined(HANDOFF_SANITIZED)
  // A sanitizer's runtime keeps freed memory resident and adds shadow memory: the bound is
  // checked in the release build; here only that the server serves on after the flood.
  WARN("RSS bound checked in the release build only; peak " << peak << " KiB, bound " << bound << " KiB");
#else
  CHECK(peak <= bound);   // before: ~0.9 MB a connection as the clients closed
  CHECK(after <= bound);  // and most of it stayed
#endif
}

#if !defined(HANDOFF_SANITIZED)  // a sanitizer's runtime reserves terabytes of address space
namespace {
/// The child's address space in KiB (VmSize), or -1.
long vm_size_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stol(line.substr(7));
  }
  return -1;
}
}  // namespace

TEST_CASE("stage 06: under an address-space limit a connection that cannot get memory is closed, and others are served",
          "[stage][adversarial][ch06]") {
  const std::string dispatch = GENERATE("inline", "pool");
  constexpr long kBody = 256L * 1024 * 1024;  // allowed by --max-body, not by the limit
  StageProcess stage(stage_binary(), dispatch_args(dispatch, {"--max-body", std::to_string(kBody)}));
  served(stage.port());
  // The limit, set on the running child (prlimit(2)): its address space now, plus 64 MiB.
  const long vm = vm_size_kib(stage.pid());
  REQUIRE(vm > 0);
  const rlimit limit{static_cast<rlim_t>(vm + 64 * 1024) * 1024, static_cast<rlim_t>(vm + 64 * 1024) * 1024};
  REQUIRE(::prlimit(stage.pid(), RLIMIT_AS, &limit, nullptr) == 0);
  // The flood first, scaled: within the limit now, it is simply served.
  { auto fds = flood(stage.port(), 100, repeat(get("/"), 2000), 500ms); }
  served(stage.port());
  // A body the limit cannot hold: the parser's string for it fails to grow (std::bad_alloc).
  Client big(stage.port());
  big.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(kBody) + "\r\n\r\n");
  const std::string piece(1 << 20, 'x');
  bool refused = false;
  try {
    for (long sent = 0; sent < kBody; sent += static_cast<long>(piece.size())) big.send(piece);
  } catch (const std::runtime_error&) {
    refused = true;  // the server closed the connection under us
  }
  CHECK((refused || big.closed_by_peer(5000ms)));
  served(stage.port());  // before: std::bad_alloc, abort, exit 134
  stage.signal(SIGTERM);
  const auto code = stage.wait_exit(10'000ms);
  REQUIRE(code);
  CHECK(*code == 0);
}
#endif

TEST_CASE("stage 06: a body trickled below --body-min-rate gets 408, and one above it is served however long it takes",
          "[stage][adversarial][ch06]") {
  // A body has 300 ms, plus 1 s for every 1000 bytes it brings: a floor of 1000 B/s.
  StageProcess stage(stage_binary(), dispatch_args("pool", {"--body-timeout-ms", "300", "--body-min-rate", "1000"}));
  const std::string head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n";
  SECTION("200 B/s, a fifth of the floor: 408, then a close") {
    Client slow(stage.port());
    slow.send(head);
    bool answered = false;
    try {
      for (int i = 0; i < 200 && !answered; ++i) {  // 10 bytes every 50 ms, for at most 10 s
        slow.send(std::string(10, 'x'));
        answered = slow.await_bytes(1, 50ms);
      }
    } catch (const std::runtime_error&) {
      // the server closed after its answer; read it below
    }
    auto r = slow.read_response(3000ms);
    REQUIRE(r);  // before: no floor; the trickle kept the connection alive for as long as it ran
    CHECK(r->status == 408);
    CHECK_FALSE(r->keep_alive);
  }
  SECTION("4000 B/s, four times the floor: served, though longer than --body-timeout-ms") {
    Client steady(stage.port());
    steady.send(head);
    for (int i = 0; i < 10; ++i) {  // 200 bytes every 50 ms: 500 ms in all
      steady.send(std::string(200, 'y'));
      std::this_thread::sleep_for(50ms);
    }
    auto r = steady.read_response(3000ms);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == std::string(2000, 'y'));
  }
}
