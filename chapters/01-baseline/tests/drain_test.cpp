// chapters/01-baseline/tests/drain_test.cpp: what a stop owes the requests a client has
// already sent (chapter 06, issue 38), end to end against every stage: each one that
// reached the server before it took up the stop (in the socket, held unparsed, or in the
// parser) is answered, the last with Connection: close; a connection with nothing sent is
// closed at once.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::dispatch_args;
using handoff::testkit::elapsed_ms;
using handoff::testkit::get;
using handoff::testkit::repeat;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("stage 01: a pipelined client across SIGTERM gets every answer, the last with Connection: close",
          "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  // One request in flight at a time: the others wait in the socket and the parser, unread,
  // when the stop begins.
  StageProcess stage(stage_binary(), dispatch_args(dispatch, {"--max-pipeline", "1", "--drain-timeout-ms", "10000"}));
  // More than one read of them (each ~4 KB): before, the ones past the first read were
  // still in the socket at the stop, and never read.
  constexpr int kSent = 24;
  const std::string request = "GET /sleep?ms=5 HTTP/1.1\r\nHost: t\r\nX-Pad: " + std::string(4000, 'p') + "\r\n\r\n";
  Client c(stage.port());
  c.send(repeat(request, kSent));  // on loopback, in the server's socket when send() returns
  auto first = c.read_response(5000ms);
  REQUIRE(first);
  stage.signal(SIGTERM);
  int answered = 1;
  bool last_closes = !first->keep_alive;
  bool earlier_close = false;
  while (answered < kSent) {
    auto r = c.read_response(5000ms);
    if (!r) break;
    CHECK(r->status == 200);
    earlier_close = earlier_close || last_closes;  // a close that was not on the last answer
    last_closes = !r->keep_alive;
    ++answered;
  }
  CHECK(answered == kSent);  // before: the requests still unread at the signal were dropped
  CHECK(last_closes);
  CHECK_FALSE(earlier_close);
  CHECK(c.closed_by_peer(3000ms));
  const auto code = stage.wait_exit(5000ms);
  REQUIRE(code);
  CHECK(*code == 0);
}

TEST_CASE("stage 01: closed-loop clients whose next request arrived before the stop are answered, and idle ones close at once",
          "[stage][ch01]") {
  // Inline, a streaming handler holds the loop between its chunks: while it does, the
  // signal arrives and the clients send their next requests, so all of them wait unread
  // in their sockets when the loop takes up the stop.
  StageProcess stage(stage_binary(), dispatch_args("inline", {"--drain-timeout-ms", "10000"}));
  constexpr int kClients = 6;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<Client>(stage.port()));
    for (int round = 0; round < 3; ++round) {  // a closed loop: one request, its answer, the next
      clients.back()->send(get("/"));
      auto r = clients.back()->read_response(5000ms);
      REQUIRE(r);
      REQUIRE(r->keep_alive);
    }
  }
  Client idle(stage.port());
  idle.send(get("/"));
  REQUIRE(idle.read_response(5000ms));
  Client holder(stage.port());
  holder.send("GET /stream?chunks=2&ms=600 HTTP/1.1\r\nHost: t\r\n\r\n");
  REQUIRE(holder.await_bytes(1, 5000ms));  // chunk 0 is out: the loop sleeps in the handler
  stage.signal(SIGTERM);
  for (auto& c : clients) c->send(get("/"));
  const auto stop_seen = Clock::now();
  for (int i = 0; i < kClients; ++i) {
    INFO("client " << i);
    auto r = clients[static_cast<std::size_t>(i)]->read_response(5000ms);
    REQUIRE(r);  // before: closed unanswered, the request never read
    CHECK(r->status == 200);
    CHECK_FALSE(r->keep_alive);  // Connection: close: the client knows nothing follows
    CHECK(clients[static_cast<std::size_t>(i)]->closed_by_peer(3000ms));
  }
  CHECK(idle.closed_by_peer(3000ms));
  CHECK(elapsed_ms(stop_seen) < 5000);  // not held to the drain deadline (10 s)
  auto streamed = holder.read_response(5000ms);
  REQUIRE(streamed);
  CHECK(streamed->body == "chunk 0\nchunk 1\n");
  const auto code = stage.wait_exit(5000ms);
  REQUIRE(code);
  CHECK(*code == 0);
}
