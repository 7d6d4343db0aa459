// server/tests/coroutine_dispatch_test: coroutine handlers on a Worker's event loop, driven
// turn by turn through its seam (chapter 04).
// Role: what the end-to-end tests cannot see: a coroutine that fails after a wait is
// answered exactly as an inline handler is (500, or an unterminated stream), and a drain
// waits for a coroutine whose connection has already gone.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "app/router.h"
#include "evloop/awaitables.h"
#include "net/fd.h"
#include "server/options.h"
#include "server/worker.h"
#include "stats/thread_stats.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace std::chrono_literals;
using evloop::Task;

namespace {

Task<void> fail_after_wait(const http::Request&, http::Responder&, const app::CoroutineContext& ctx) {
  co_await evloop::sleep_for(ctx.loop, 1ms);
  throw std::runtime_error("boom after a wait");
}

Task<void> silent_after_wait(const http::Request&, http::Responder&, const app::CoroutineContext& ctx) {
  co_await evloop::sleep_for(ctx.loop, 1ms);
}

Task<void> fail_midstream(const http::Request&, http::Responder& out, const app::CoroutineContext& ctx) {
  out.start_stream(200, "text/plain");
  out.send_chunk("partial");
  co_await evloop::sleep_for(ctx.loop, 1ms);
  throw std::runtime_error("boom after the head");
}

Task<void> answer_after(const http::Request& req, http::Responder& out, const app::CoroutineContext& ctx) {
  co_await evloop::sleep_for(ctx.loop, req.target == "/co/slow" ? 100ms : 1ms);
  http::Response r;
  r.body = "ok";
  out.send(std::move(r));
}

/// A worker with an event loop and no pool, fed through adopt().
struct Rig {
  server::ServerOptions options;
  app::Router router;
  stats::Registry registry;
  std::unique_ptr<server::Worker> worker;

  Rig() {
    options.event_loop = evloop::EventLoopOptions{};
    options.drain_timeout_ms = 3000;
    router.add("GET", "/ok", [](const http::Request&, http::Responder& out) {
      http::Response r;
      r.body = "ok";
      out.send(std::move(r));
    });
    router.add_coroutine("GET", "/co/throw", fail_after_wait);
    router.add_coroutine("GET", "/co/silent", silent_after_wait);
    router.add_coroutine("GET", "/co/midstream", fail_midstream);
    router.add_coroutine("GET", "/co/fast", answer_after);
    router.add_coroutine("GET", "/co/slow", answer_after);
    worker = std::make_unique<server::Worker>(options, 0, router, registry, nullptr, net::Listener{});
    worker->start_loop();
  }
  ~Rig() {
    worker->request_stop();
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (worker->run_turn(10) && std::chrono::steady_clock::now() < deadline) {
    }
    worker->finish_loop();
  }

  net::Fd connect() {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    worker->adopt(net::Fd(sv[0]));
    return net::Fd(sv[1]);
  }

  /// Turn the loop until `client` has received bytes satisfying `done`, or `limit` passes.
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

std::string get(std::string_view target) { return "GET " + std::string(target) + " HTTP/1.1\r\nHost: t\r\n\r\n"; }

}  // namespace

TEST_CASE("worker: a coroutine handler that throws or ends without answering after a wait is answered 500",
          "[worker][ch04]") {
  testkit::Watchdog dog(10s, "coroutine failures");
  Rig rig;
  net::Fd client = rig.connect();
  send_all(client.get(), get("/co/throw") + get("/co/silent") + get("/co/fast"));
  const std::string got =
      rig.turn_until(client.get(), [](const std::string& s, bool eof) { return eof || has(s, "\r\n\r\nok"); });
  CHECK(got.rfind("HTTP/1.1 500", 0) == 0);
  CHECK(has(got.substr(1), "HTTP/1.1 500"));  // the silent one
  CHECK(has(got, "\r\n\r\nok"));              // and the connection serves on
  CHECK(rig.registry.to_json().dump().find("\"handler_failures\":2") != std::string::npos);
  CHECK(rig.worker->coroutines_in_flight() == 0);
}

TEST_CASE("worker: a coroutine that fails after its stream began ends it unterminated and closes", "[worker][ch04]") {
  testkit::Watchdog dog(10s, "coroutine failed stream");
  Rig rig;
  net::Fd client = rig.connect();
  send_all(client.get(), get("/co/midstream") + get("/ok"));
  const std::string got = rig.turn_until(client.get(), [](const std::string&, bool eof) { return eof; });
  CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(has(got, "partial"));
  CHECK_FALSE(has(got, "\r\n0\r\n\r\n"));  // no last chunk: the client sees a truncated body
  CHECK_FALSE(has(got, "\r\n\r\nok"));     // and nothing after it
  CHECK(rig.registry.to_json().dump().find("\"handler_failures\":1") != std::string::npos);
}

TEST_CASE("worker: a drain waits for a coroutine whose connection has gone, until the coroutine ends",
          "[worker][ch04]") {
  testkit::Watchdog dog(10s, "drain with an orphaned coroutine");
  Rig rig;
  {
    net::Fd client = rig.connect();
    send_all(client.get(), get("/ok") + get("/co/slow"));
    for (int i = 0; i < 3; ++i) rig.worker->run_turn(0);  // /ok answered, /co/slow asleep
    REQUIRE(rig.worker->coroutines_in_flight() == 1);
    // The client closes with /ok's answer unread: closing a unix socket with unread input
    // resets its peer, so the server's next read fails and the connection closes at once,
    // its coroutine still asleep.
  }
  const auto start = std::chrono::steady_clock::now();
  rig.worker->request_stop();
  bool running = true;
  std::size_t in_flight_at_end = 99;
  while (running && std::chrono::steady_clock::now() - start < 3s) {
    in_flight_at_end = rig.worker->coroutines_in_flight();
    running = rig.worker->run_turn(10);
  }
  CHECK_FALSE(running);
  CHECK(in_flight_at_end == 0);  // it returned only once the coroutine had ended
  CHECK(std::chrono::steady_clock::now() - start >= 50ms);
}
