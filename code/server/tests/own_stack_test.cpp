// server/tests/own_stack_test: a stack per worker against a fake Onload (chapter 05).
// Role: with --stack per-worker and an Onload that exports the extension calls (a fake,
// dlopen'ed RTLD_GLOBAL before the worker looks), the worker names a thread-scope stack
// "w<index>" when its loop starts and moves each adopted socket into it before anything
// reads it; with --stack shared it calls nothing. Its own binary: the fake stays loaded.
#include <dlfcn.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "app/router.h"
#include "fake_onload.h"
#include "net/fd.h"
#include "server/options.h"
#include "server/worker.h"
#include "stats/thread_stats.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace std::chrono_literals;

namespace {
FakeOnloadRecord* load_fake() {
  void* lib = ::dlopen(HANDOFF_FAKE_ONLOAD, RTLD_NOW | RTLD_GLOBAL);
  INFO((lib == nullptr ? ::dlerror() : "loaded"));
  REQUIRE(lib != nullptr);
  auto* record = static_cast<FakeOnloadRecord*>(::dlsym(lib, "fake_onload_record"));
  REQUIRE(record != nullptr);
  return record;
}

/// Adopt one end of a stream pair whose other end has already sent a request, serve it,
/// and return what the client read.
std::string serve_one(server::Worker& worker) {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
  net::Fd client(sv[1]);
  const std::string req = "GET /ok HTTP/1.1\r\nHost: t\r\n\r\n";
  REQUIRE(::send(client.get(), req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
  worker.adopt(net::Fd(sv[0]));
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (got.find("\r\n\r\nok") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    worker.run_turn(5);
    char buf[1024];
    const ssize_t n = ::recv(client.get(), buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

void stop(server::Worker& worker) {
  worker.request_stop();
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (worker.run_turn(10) && std::chrono::steady_clock::now() < deadline) {
  }
  worker.finish_loop();
}

std::uint64_t counter(const stats::Registry& registry, const char* name) {
  return registry.to_json()["threads"][0]["counters"][name].get<std::uint64_t>();
}
}  // namespace

TEST_CASE(
    "server: under (a fake) Onload a worker with a stack of its own names its thread's stack and moves "
    "each socket before its first read, and a worker on the shared stack calls nothing",
    "[server][ch05]") {
  testkit::Watchdog dog(20s, "own stack with a fake Onload");
  FakeOnloadRecord* record = load_fake();
  app::Router router;
  router.add("GET", "/ok", [](const http::Request&, http::Responder& out) {
    http::Response r;
    r.body = "ok";
    out.send(std::move(r));
  });

  SECTION("shared: nothing is called") {
    const std::size_t before = record->count;
    server::ServerOptions options;
    stats::Registry registry;
    server::Worker worker(options, 3, router, registry, nullptr, net::Listener{});
    worker.start_loop();
    CHECK_FALSE(worker.own_stack());
    CHECK(serve_one(worker).find("\r\n\r\nok") != std::string::npos);
    stop(worker);
    CHECK(record->count == before);
  }

  SECTION("per-worker: a thread-scope stack named w3, and the socket moved with its request unread") {
    const std::size_t before = record->count;
    server::ServerOptions options;
    options.stack = server::StackPlacement::per_worker;
    stats::Registry registry;
    server::Worker worker(options, 3, router, registry, nullptr, net::Listener{});
    worker.start_loop();
    CHECK(worker.own_stack());
    REQUIRE(record->count == before + 1);
    const FakeOnloadCall& named = record->calls[before];
    CHECK(named.kind == 1);
    CHECK(named.who == 0);    // ONLOAD_THIS_THREAD
    CHECK(named.scope == 1);  // ONLOAD_SCOPE_THREAD
    CHECK(std::string(named.name) == "w3");
    CHECK(serve_one(worker).find("\r\n\r\nok") != std::string::npos);
    stop(worker);
    REQUIRE(record->count == before + 2);
    const FakeOnloadCall& moved = record->calls[before + 1];
    CHECK(moved.kind == 2);
    CHECK(moved.fd >= 0);
    // Before its first read: the whole request was still waiting in the socket.
    CHECK(moved.unread == static_cast<int>(std::string("GET /ok HTTP/1.1\r\nHost: t\r\n\r\n").size()));
    CHECK(counter(registry, "stack_moves") == 1);
  }
}
