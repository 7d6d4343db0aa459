// chapters/01-baseline/tests/startup_test.cpp: how the stage binary starts, end to end: each
// failed start after the flags are parsed is one stderr line and a documented exit status
// (server/start_failure.h, README.md), never an abort; and it listens and drains over IPv6 (chapter 01).
// Changed in chapter 06: the dual-stack line counted in stderr, which a later stage says more in.
// Every later stage compiles these again against its own binary.
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "net/listener.h"
#include "testkit/http_client.h"
#include "testkit/stage_process.h"

using handoff::testkit::stage_binary;
using handoff::testkit::Client;
using handoff::testkit::FinishedRun;
using handoff::testkit::run_to_exit;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;

namespace {
const std::string kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";

/// A failed start: it ended by itself, printed nothing on stdout (no readiness line), and
/// its stderr is exactly the one line `expected_line`.
void check_failed_start(const FinishedRun& run, int expected_status, const std::string& expected_line) {
  INFO("stderr: " << run.err);
  REQUIRE(run.status.has_value());
  CHECK(*run.status == expected_status);
  CHECK(run.out.empty());
  CHECK(run.err == expected_line + "\n");
}

/// Whether this machine can listen on IPv6 loopback at all (a container may have no ::1).
bool has_ipv6_loopback() {
  try {
    handoff::net::Listener::open("::1", 0, false);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

int unprivileged_port_start() {
  std::ifstream in("/proc/sys/net/ipv4/ip_unprivileged_port_start");
  int first = 1024;
  in >> first;
  return first;
}
}  // namespace

TEST_CASE("stage 01: a port already in use is one line naming the address and exit 69, not an abort", "[stage][ch01]") {
  const auto taken = handoff::net::Listener::open("127.0.0.1", 0, false);
  const std::string port = std::to_string(taken.port());
  const std::string workers = GENERATE("1", "2");  // 2: SO_REUSEPORT, which a plain listener does not share
  INFO("--workers " << workers);
  check_failed_start(run_to_exit(stage_binary(), {"--port", port, "--workers", workers}, 10s), 69,
                     "handoff: cannot listen on 127.0.0.1:" + port + ": Address already in use");
}

TEST_CASE("stage 01: a host that is no IPv4 or IPv6 address is one line and exit 64", "[stage][ch01]") {
  const std::string host = GENERATE("300.1.1.1", "1.2.3", "::g", "[::1");
  check_failed_start(run_to_exit(stage_binary(), {"--host", host, "--port", "0"}, 10s), 64,
                     "handoff: bad host '" + host + "': not an IPv4 or IPv6 address");
}

TEST_CASE("stage 01: a host name the resolver does not know is one line and exit 68", "[stage][ch01]") {
  // .invalid never resolves (RFC 6761); the lookup is bounded by the resolver's own timeout.
  const FinishedRun run = run_to_exit(stage_binary(), {"--host", "no-such-host.invalid", "--port", "0"}, 30s);
  INFO("stderr: " << run.err);
  REQUIRE(run.status.has_value());
  CHECK(*run.status == 68);
  CHECK(run.out.empty());
  CHECK(run.err.rfind("handoff: cannot resolve host 'no-such-host.invalid': ", 0) == 0);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}

TEST_CASE("stage 01: an address that is not this machine's is one line and exit 69", "[stage][ch01]") {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): no interface has it.
  check_failed_start(run_to_exit(stage_binary(), {"--host", "192.0.2.1", "--port", "8080"}, 10s), 69,
                     "handoff: cannot listen on 192.0.2.1:8080: Cannot assign requested address");
}

TEST_CASE("stage 01: a port this user may not bind is one line and exit 77", "[stage][ch01]") {
  if (unprivileged_port_start() <= 80) {
    WARN("net.ipv4.ip_unprivileged_port_start lets anyone bind port 80: nothing to refuse here");
    return;
  }
  std::vector<std::string> as_nobody;
  if (::geteuid() == 0) {  // root may bind it: start the binary as nobody instead
    if (::access("/usr/bin/setpriv", X_OK) != 0) {
      WARN("running as root without setpriv (util-linux): cannot start the stage as another user");
      return;
    }
    as_nobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  }
  check_failed_start(run_to_exit(stage_binary(), {"--port", "80"}, 10s, as_nobody), 77,
                     "handoff: cannot listen on 127.0.0.1:80: Permission denied");
}

#ifndef HANDOFF_SANITIZED  // a sanitizer's runtime needs descriptors of its own
TEST_CASE("stage 01: a system call that fails at start (out of descriptors) is one line and exit 71", "[stage][ch01]") {
  // Four descriptors: stdin, stdout, stderr and one, which the loader borrows for each
  // library and the listener then keeps; the next (epoll's, an eventfd) is refused.
  const FinishedRun run =
      run_to_exit(stage_binary(), {"--port", "0"}, 10s, {"/bin/sh", "-c", "ulimit -n 4 && exec \"$0\" \"$@\""});
  INFO("stderr: " << run.err);
  REQUIRE(run.status.has_value());
  CHECK(*run.status == 71);
  CHECK(run.out.empty());
  CHECK(run.err.rfind("handoff: cannot start: ", 0) == 0);
  CHECK(run.err.find(": Too many open files\n") != std::string::npos);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}
#endif

TEST_CASE("stage 01: over IPv6 loopback it prints a bracketed address, serves and drains to exit 0", "[stage][ch01]") {
  if (!has_ipv6_loopback()) {
    WARN("no IPv6 loopback (::1) on this machine");
    return;
  }
  const std::string host = GENERATE("::1", "[::1]");
  const std::string dispatch = GENERATE("inline", "pool");
  INFO("--host " << host << " --dispatch " << dispatch);
  StageProcess stage(stage_binary(), {"--host", host, "--dispatch", dispatch, "--drain-timeout-ms", "2000"});
  CHECK(stage.host() == "::1");  // parsed from `handoff: listening on http://[::1]:PORT`
  Client c("::1", stage.port());
  for (int i = 0; i < 3; ++i) {
    c.send(kGet);
    const auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "Hello, World!");
  }
  // A request read before SIGTERM is still answered, then the process exits 0.
  c.send("GET /sleep?ms=200 HTTP/1.1\r\nHost: t\r\n\r\n");
  std::this_thread::sleep_for(50ms);
  stage.signal(SIGTERM);
  const auto slow = c.read_response();
  REQUIRE(slow);
  CHECK(slow->body == "slept 200 ms");
  CHECK(stage.wait_exit(5s) == 0);
}

TEST_CASE("stage 01: --host :: is dual-stack, says so once, and serves IPv6 and IPv4 clients", "[stage][ch01]") {
  if (!has_ipv6_loopback()) {
    WARN("no IPv6 loopback (::1) on this machine");
    return;
  }
  StageProcess stage(stage_binary(), {"--host", "::"});
  CHECK(stage.host() == "::");
  const std::string err = stage.stderr_text();
  const std::string line = "handoff: [::] is dual-stack (IPV6_V6ONLY off): IPv4 clients are served too\n";
  // Once (a later stage may say other things at start, chapter 06 its settings).
  const auto first = err.find(line);
  CHECK(first != std::string::npos);
  CHECK(err.find(line, first + 1) == std::string::npos);
  CHECK(err.find("IPv6 only") == std::string::npos);
  for (const char* client_host : {"::1", "127.0.0.1"}) {
    INFO("client to " << client_host);
    Client c(client_host, stage.port());
    c.send(kGet);
    const auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->body == "Hello, World!");
  }
  stage.signal(SIGTERM);
  CHECK(stage.wait_exit(5s) == 0);
}

TEST_CASE("stage 01: an IPv6-only address does not take IPv4 clients", "[stage][ch01]") {
  if (!has_ipv6_loopback()) {
    WARN("no IPv6 loopback (::1) on this machine");
    return;
  }
  StageProcess stage(stage_binary(), {"--host", "::1"});
  CHECK(stage.stderr_text().find("dual-stack") == std::string::npos);
  CHECK_THROWS_AS(Client("127.0.0.1", stage.port()), std::runtime_error);
}
