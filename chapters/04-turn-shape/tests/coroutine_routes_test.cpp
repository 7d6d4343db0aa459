// chapters/04-turn-shape/tests/coroutine_routes_test.cpp: stage 04's coroutine handlers end
// to end, through the real binary: /async/work (run_in_executor on the worker's pool) and
// /async/sleep (a timer on the loop) answer under both turn shapes, in request order when
// they finish out of order, after a client that left mid-await, and through a drain (chapter 04).
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::dispatch_args;
using handoff::testkit::elapsed_ms;
using handoff::testkit::get;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("stage 04: /async/work and /async/sleep answer under both turn shapes", "[stage][ch04]") {
  const std::string turn = GENERATE("generation", "drain");
  INFO("--turn " << turn);
  StageProcess stage(stage_binary(), dispatch_args("pool", {"--turn", turn}));
  Client c(stage.port());
  for (int i = 0; i < 20; ++i) {
    c.send(get("/async/work?us=50") + get("/async/sleep?ms=1"));
    auto work = c.read_response(), sleep = c.read_response();
    REQUIRE(work);
    REQUIRE(sleep);
    CHECK(work->status == 200);
    CHECK(work->body.rfind("burned 50 us in ", 0) == 0);
    CHECK(sleep->status == 200);
    CHECK(sleep->body == "slept 1 ms");
  }
}

TEST_CASE("stage 04: without a pool /async/work answers 503 and /async/sleep still sleeps", "[stage][ch04]") {
  StageProcess stage(stage_binary(), {"--dispatch", "inline"});
  Client c(stage.port());
  c.send(get("/async/work?us=50") + get("/async/sleep?ms=1"));
  auto work = c.read_response(), sleep = c.read_response();
  REQUIRE(work);
  REQUIRE(sleep);
  CHECK(work->status == 503);
  CHECK(sleep->body == "slept 1 ms");
}

TEST_CASE("stage 04: pipelined coroutine requests that finish out of order are answered in request order",
          "[stage][ch04]") {
  const std::string turn = GENERATE("generation", "drain");
  INFO("--turn " << turn);
  StageProcess stage(stage_binary(), dispatch_args("pool", {"--turn", turn}));
  Client c(stage.port());
  const auto start = Clock::now();
  // They finish last to first; the inline / in the middle finishes at once.
  c.send(get("/async/sleep?ms=300") + get("/async/sleep?ms=200") + get("/") + get("/async/work?us=100") +
         get("/async/sleep?ms=0"));
  std::vector<std::string> bodies;
  for (int i = 0; i < 5; ++i) {
    auto r = c.read_response(5000ms);
    REQUIRE(r);
    CHECK(r->status == 200);
    bodies.push_back(r->body);
  }
  CHECK(bodies[0] == "slept 300 ms");
  CHECK(bodies[1] == "slept 200 ms");
  CHECK(bodies[2] == "Hello, World!");
  CHECK(bodies[3].rfind("burned 100 us in ", 0) == 0);
  CHECK(bodies[4] == "slept 0 ms");
  // The waits overlapped on the loop: one after the other they would take at least 500 ms.
  CHECK(elapsed_ms(start) < 500);
}

TEST_CASE("stage 04: a client that closes while its coroutines wait leaves the server serving others",
          "[stage][ch04]") {
  StageProcess stage(stage_binary(), dispatch_args("pool"));
  {
    Client gone(stage.port());
    gone.send(get("/") + get("/async/sleep?ms=150") + get("/async/work?us=20000") + get("/async/sleep?ms=100"));
    REQUIRE(gone.read_response());  // the coroutines behind it were dispatched in the same pump
    gone.reset();
  }
  Client other(stage.port());
  other.send(get("/async/sleep?ms=1") + get("/"));
  auto a = other.read_response(), b = other.read_response();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->body == "slept 1 ms");
  // After the gone client's coroutines have ended (their answers going nowhere), the
  // server still serves, on the old connection's worker and a new one.
  std::this_thread::sleep_for(300ms);
  other.send(get("/async/sleep?ms=1"));
  auto c = other.read_response();
  REQUIRE(c);
  CHECK(c->body == "slept 1 ms");
  Client late(stage.port());
  late.send(get("/async/work?us=10"));
  auto d = late.read_response();
  REQUIRE(d);
  CHECK(d->status == 200);
  CHECK_FALSE(stage.wait_exit(0ms));
}

TEST_CASE("stage 04: SIGTERM waits for a coroutine in flight, which answers, then exit 0", "[stage][ch04]") {
  StageProcess stage(stage_binary(), dispatch_args("pool"));
  Client c(stage.port());
  c.send(get("/") + get("/async/sleep?ms=300") + get("/async/work?us=1000"));
  REQUIRE(c.read_response());  // the coroutines behind it were dispatched in the same pump
  stage.signal(SIGTERM);
  auto slept = c.read_response(5000ms), worked = c.read_response(5000ms);
  REQUIRE(slept);
  REQUIRE(worked);
  CHECK(slept->status == 200);
  CHECK(slept->body == "slept 300 ms");
  CHECK(worked->body.rfind("burned 1000 us in ", 0) == 0);
  CHECK(c.closed_by_peer(3000ms));  // and, every answer out, the drain closes the connection
  const auto code = stage.wait_exit(5000ms);
  REQUIRE(code);
  CHECK(*code == 0);
}

TEST_CASE("stage 04: a coroutine still waiting at the drain deadline is cancelled and the loop returns",
          "[stage][ch04]") {
  StageProcess stage(stage_binary(), dispatch_args("pool", {"--drain-timeout-ms", "200"}));
  Client c(stage.port());
  c.send(get("/") + get("/async/sleep?ms=20000"));
  REQUIRE(c.read_response());
  const auto start = Clock::now();
  stage.signal(SIGTERM);
  CHECK(c.closed_by_peer(3000ms));  // closed unanswered at the deadline
  const auto code = stage.wait_exit(5000ms);
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK(elapsed_ms(start) < 3000);
  // The loop itself returned: not left behind by the process's own bound on the drain.
  CHECK(stage.stderr_text().find("still busy") == std::string::npos);
}
