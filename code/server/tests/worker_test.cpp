// server/tests/worker_test: one Worker driven turn by turn through its seam (chapter 01).
// Role: whole-connection behaviour that needs the loop's own counters or a hand-moved
// clock: handler failures answered, a header timeout on a fake clock, and no busy loop
// while accepting is paused during a drain.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/router.h"
#include "net/fd.h"
#include "net/listener.h"
#include "server/options.h"
#include "server/worker.h"
#include "stats/thread_stats.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace std::chrono_literals;

namespace {

/// A worker without a pool, fed through adopt(), with the client's end of each socketpair.
struct Rig {
  server::ServerOptions options;
  app::Router router;
  stats::Registry registry;
  std::unique_ptr<server::Worker> worker;

  explicit Rig(net::Listener listener = {}, std::function<std::int64_t()> clock = nullptr) {
    options.header_timeout_ms = 1000;
    options.idle_timeout_ms = 1000;
    options.drain_timeout_ms = 1000;
    router.add("GET", "/ok", [](const http::Request&, http::Responder& out) {
      http::Response r;
      r.body = "ok";
      out.send(std::move(r));
    });
    router.add("GET", "/throw", [](const http::Request&, http::Responder&) { throw std::runtime_error("boom"); });
    router.add("GET", "/silent", [](const http::Request&, http::Responder&) {});
    router.add("GET", "/midstream", [](const http::Request&, http::Responder& out) {
      out.start_stream(200, "text/plain");
      out.send_chunk("partial");
      throw std::runtime_error("boom after the head");
    });
    worker = std::make_unique<server::Worker>(options, 0, router, registry, nullptr, std::move(listener));
    if (clock) worker->set_clock(std::move(clock));
    worker->start_loop();
  }
  ~Rig() {
    worker->request_stop();
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (worker->run_turn() && std::chrono::steady_clock::now() < deadline) {
    }
    worker->finish_loop();
  }

  /// A new connection on the worker; returns the client's end (non-blocking).
  net::Fd connect() {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    worker->adopt(net::Fd(sv[0]));
    return net::Fd(sv[1]);
  }

  /// Turn the loop until `client` has received bytes satisfying `done` (given everything
  /// received so far and whether the server closed), or `limit` passes.
  std::string turn_until(int client, const std::function<bool(const std::string&, bool)>& done,
                         std::chrono::milliseconds limit = 2000ms) {
    std::string got;
    bool eof = false;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done(got, eof) && std::chrono::steady_clock::now() < deadline) {
      worker->run_turn(10);
      char buf[4096];
      for (;;) {
        const ssize_t n = ::recv(client, buf, sizeof buf, 0);
        if (n > 0) {
          got.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0) eof = true;
        break;
      }
    }
    return got;
  }
};

void send_all(int fd, std::string_view bytes) {
  REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size()));
}

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("worker: a handler that throws or returns without answering is answered 500", "[worker][ch01]") {
  testkit::Watchdog dog(10s, "handler failures");
  Rig rig;
  net::Fd client = rig.connect();
  send_all(client.get(),
           "GET /throw HTTP/1.1\r\nHost: t\r\n\r\nGET /silent HTTP/1.1\r\nHost: t\r\n\r\nGET /ok HTTP/1.1\r\nHost: "
           "t\r\n\r\n");
  const std::string got =
      rig.turn_until(client.get(), [](const std::string& s, bool eof) { return eof || has(s, "\r\n\r\nok"); });
  CHECK(got.rfind("HTTP/1.1 500", 0) == 0);
  CHECK(has(got.substr(1), "HTTP/1.1 500"));  // the silent one
  CHECK(has(got, "\r\n\r\nok"));              // and the connection serves on
  CHECK(rig.registry.to_json().dump().find("\"handler_failures\":2") != std::string::npos);
}

TEST_CASE("worker: a handler that fails after its stream began ends it unterminated and closes", "[worker][ch01]") {
  testkit::Watchdog dog(10s, "failed stream");
  Rig rig;
  net::Fd client = rig.connect();
  send_all(client.get(), "GET /midstream HTTP/1.1\r\nHost: t\r\n\r\nGET /ok HTTP/1.1\r\nHost: t\r\n\r\n");
  const std::string got = rig.turn_until(client.get(), [](const std::string&, bool eof) { return eof; });
  CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(has(got, "partial"));
  CHECK_FALSE(has(got, "\r\n0\r\n\r\n"));  // no last chunk: the client sees a truncated body
  CHECK_FALSE(has(got, "\r\n\r\nok"));     // and nothing after it
  CHECK(rig.registry.to_json().dump().find("\"handler_failures\":1") != std::string::npos);
}

TEST_CASE("worker: the loop counts the system calls a request costs it", "[worker][ch01]") {
  testkit::Watchdog dog(10s, "syscall count");
  Rig rig;
  net::Fd client = rig.connect();
  const auto syscalls = [&] { return rig.worker->loop_stats().get(stats::Counter::syscalls); };
  const auto before = syscalls();
  send_all(client.get(), "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n");
  const std::string got = rig.turn_until(client.get(), [](const std::string& s, bool) { return has(s, "\r\n\r\nok"); });
  REQUIRE(has(got, "\r\n\r\nok"));
  CHECK(syscalls() - before >= 3);  // at least an epoll_wait, a recv and a sendmsg
}

TEST_CASE("worker: the header timeout follows the injected clock", "[worker][ch01]") {
  testkit::Watchdog dog(10s, "fake clock");
  std::int64_t fake_now = 1'000'000'000;
  Rig rig({}, [&fake_now] { return fake_now; });
  net::Fd client = rig.connect();
  send_all(client.get(), "GET /ok HTTP/1.1\r\n");
  std::string got = rig.turn_until(
      client.get(), [](const std::string& s, bool) { return !s.empty(); }, 300ms);
  CHECK(got.empty());         // no real time makes it late ...
  fake_now += 2'000'000'000;  // ... two seconds of fake time do
  got = rig.turn_until(client.get(), [](const std::string&, bool eof) { return eof; });
  CHECK(got.rfind("HTTP/1.1 408", 0) == 0);
}

TEST_CASE("worker: accepting paused for want of descriptors does not spin while draining", "[worker][ch01]") {
#if defined(HANDOFF_SANITIZED)
  WARN("skipped under sanitizers: their runtimes need the descriptors this test exhausts");
  return;
#endif
  testkit::Watchdog dog(10s, "paused accept while draining");
  net::Listener listener = net::Listener::open("127.0.0.1", 0, false);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(listener.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  Rig rig(std::move(listener));
  net::Fd slow = rig.connect();
  send_all(slow.get(), "GET /ok HTTP/1.1\r\n");  // a head in progress keeps the drain going
  std::vector<net::Fd> crowd;                    // connected, waiting in the backlog to be accepted
  for (int i = 0; i < 4; ++i) {
    crowd.emplace_back(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(::connect(crowd.back().get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  // Every descriptor below the lowest free one is taken: a limit there makes accept fail.
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  const int lowest_free = ::dup(0);
  ::close(lowest_free);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &tight) == 0);
  for (int i = 0; i < 3; ++i) rig.worker->run_turn();  // accept hits EMFILE and pauses
  rig.worker->request_stop();
  rig.worker->run_turn();  // the drain begins
  const auto polls = [&] { return rig.worker->loop_stats().get(stats::Counter::loop_polls); };
  const auto before = polls();
  const auto until = std::chrono::steady_clock::now() + 300ms;
  while (std::chrono::steady_clock::now() < until) rig.worker->run_turn();
  const auto spun = polls() - before;
  ::setrlimit(RLIMIT_NOFILE, &saved);
  INFO("zero-timeout polls in 300 ms: " << spun);
  CHECK(spun < 10);  // a stale resume time makes every wait a zero-timeout poll
}
