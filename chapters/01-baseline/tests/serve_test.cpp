// chapters/01-baseline/tests/serve_test.cpp: stage 01 end to end, on loopback, through the
// real binary, in both dispatch modes (chapter 01: inline on the loop, and the datagram pool).
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;

namespace {
std::vector<std::string> args_for(const std::string& dispatch, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"--dispatch", dispatch, "--blocking-threads", "2"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}
const std::string kGet = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
}  // namespace

TEST_CASE("stage 01: keep-alive serves many requests on one connection", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  Client c(stage.port());
  for (int i = 0; i < 20; ++i) {
    c.send(kGet);
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body == "Hello, World!");
    CHECK(r->keep_alive);
  }
}

TEST_CASE("stage 01: three pipelined requests in one write are answered in order", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  Client c(stage.port());
  // The slow one first: with two pool threads the later ones finish earlier, and must wait.
  c.send("GET /sleep?ms=150 HTTP/1.1\r\nHost: t\r\n\r\nGET /json HTTP/1.1\r\nHost: t\r\n\r\n" + kGet);
  auto a = c.read_response(), b = c.read_response(), d = c.read_response();
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(d);
  CHECK(a->body == "slept 150 ms");
  CHECK(b->body == R"({"message":"Hello, World!"})");
  CHECK(d->body == "Hello, World!");
}

TEST_CASE("stage 01: pipelined requests sent one byte at a time are answered", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  Client c(stage.port());
  c.send_bytewise("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello" + kGet);
  auto a = c.read_response(), b = c.read_response();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->body == "hello");
  CHECK(b->body == "Hello, World!");
}

TEST_CASE("stage 01: chunked request bodies, HEAD and a chunked streaming response", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  Client c(stage.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  auto echo = c.read_response();
  REQUIRE(echo);
  CHECK(echo->body == "abcde");
  c.send("HEAD / HTTP/1.1\r\nHost: t\r\n\r\n");
  auto head = c.read_response(5000ms, true);
  REQUIRE(head);
  CHECK(head->status == 200);
  CHECK(head->body.empty());
  REQUIRE(head->header("Content-Length"));
  CHECK(*head->header("Content-Length") == "13");
  c.send("GET /stream?chunks=4&ms=5 HTTP/1.1\r\nHost: t\r\n\r\n");
  auto stream = c.read_response();
  REQUIRE(stream);
  REQUIRE(stream->header("Transfer-Encoding"));
  CHECK(stream->body == "chunk 0\nchunk 1\nchunk 2\nchunk 3\n");
  c.send(kGet);  // the connection is still good after the stream
  auto after = c.read_response();
  REQUIRE(after);
  CHECK(after->status == 200);
}

TEST_CASE("stage 01: Expect: 100-continue gets an interim 100 before the body is sent", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  Client c(stage.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  auto interim = c.read_response();
  REQUIRE(interim);
  CHECK(interim->status == 100);
  c.send("body");
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == "body");
}

TEST_CASE("stage 01: HTTP/1.0 closes unless asked to keep alive, and Connection: close closes", "[stage][ch01]") {
  StageProcess stage(stage_binary(), args_for("pool"));
  {
    Client c(stage.port());
    c.send("GET / HTTP/1.0\r\n\r\n");
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->version_minor == 0);
    CHECK_FALSE(r->keep_alive);
    CHECK(c.closed_by_peer());
  }
  {
    Client c(stage.port());
    c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->keep_alive);
    c.send("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    auto r2 = c.read_response();
    REQUIRE(r2);
    REQUIRE(r2->header("Connection"));
    CHECK(*r2->header("Connection") == "close");
    CHECK(c.closed_by_peer());
  }
}

TEST_CASE("stage 01: every bad input gets its status, then a clean close, and the server serves on", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch, {"--max-body", "1000"}));
  struct Case {
    std::string bytes;
    int status;
  };
  const std::vector<Case> cases{
      {"GARBAGE\r\n\r\n", 400},
      {"GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n", 414},
      {"GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(17000, 'b') + "\r\n\r\n", 431},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n", 413},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400},
      {"GET /missing HTTP/1.1\r\nHost: t\r\n\r\n", 404},
      {"DELETE / HTTP/1.1\r\nHost: t\r\n\r\n", 405},
  };
  std::string fields;
  for (int i = 0; i < 101; ++i) fields += "X-F" + std::to_string(i) + ": v\r\n";
  auto all = cases;
  all.push_back({"GET / HTTP/1.1\r\n" + fields + "\r\n", 431});
  for (const auto& bad : all) {
    INFO("request starts: " << bad.bytes.substr(0, 40));
    Client c(stage.port());
    c.send(bad.bytes);
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->status == bad.status);
    if (bad.status != 404 && bad.status != 405) CHECK(c.closed_by_peer());
    Client next(stage.port());
    next.send(kGet);
    auto ok = next.read_response();
    REQUIRE(ok);
    CHECK(ok->status == 200);
  }
}

TEST_CASE("stage 01: a request behind a bad one on the same connection is not answered", "[stage][ch01]") {
  StageProcess stage(stage_binary(), args_for("pool"));
  Client c(stage.port());
  c.send(kGet + "BROKEN\r\n\r\n" + kGet);
  auto first = c.read_response();
  auto second = c.read_response();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->status == 200);
  CHECK(second->status == 400);
  CHECK(c.closed_by_peer());
}

TEST_CASE("stage 01: concurrent clients each get their own answers", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      Client c(stage.port());
      for (int i = 0; i < 50; ++i) {
        const std::string body = "client " + std::to_string(t) + " request " + std::to_string(i);
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
        auto r = c.read_response();
        if (r && r->body == body) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  CHECK(ok.load() == 8 * 50);
}

TEST_CASE("stage 01: a client that never finishes its head is answered 408 and closed", "[stage][ch01]") {
  StageProcess stage(stage_binary(), args_for("pool", {"--header-timeout-ms", "300"}));
  Client slow(stage.port());
  slow.send("GET / HTTP/1.1\r\nHost: t\r\n");
  auto r = slow.read_response(3000ms);
  REQUIRE(r);
  CHECK(r->status == 408);
  CHECK(slow.closed_by_peer(3000ms));
  Client next(stage.port());
  next.send(kGet);
  REQUIRE(next.read_response());
}

TEST_CASE("stage 01: an idle keep-alive connection is closed after the idle timeout", "[stage][ch01]") {
  StageProcess stage(stage_binary(), args_for("inline", {"--idle-timeout-ms", "300"}));
  Client c(stage.port());
  c.send(kGet);
  REQUIRE(c.read_response());
  CHECK(c.closed_by_peer(3000ms));
}

TEST_CASE("stage 01: SIGTERM drains: requests already read are answered, then exit 0", "[stage][ch01]") {
  StageProcess stage(stage_binary(), args_for("pool"));
  Client busy(stage.port());
  busy.send("GET /stream?chunks=3&ms=200 HTTP/1.1\r\nHost: t\r\n\r\n");
  Client idle(stage.port());
  REQUIRE(busy.await_bytes(1));  // the stream has begun: the server has read the request
  stage.signal(SIGTERM);
  auto r = busy.read_response(5000ms);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == "chunk 0\nchunk 1\nchunk 2\n");
  CHECK(idle.closed_by_peer());
  const auto code = stage.wait_exit(5000ms);
  REQUIRE(code);
  CHECK(*code == 0);
}

TEST_CASE("stage 01: /stats reports the loop and pool threads with their CPU", "[stage][ch01]") {
  StageProcess stage(stage_binary(), args_for("pool"));
  Client c(stage.port());
  for (int i = 0; i < 10; ++i) {
    c.send(kGet);
    REQUIRE(c.read_response());
  }
  c.send("GET /stats HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->body.find("\"name\":\"loop-0\"") != std::string::npos);
  CHECK(r->body.find("\"name\":\"pool-0-1\"") != std::string::npos);
  CHECK(r->body.find("\"handoff_sends\"") != std::string::npos);
}

TEST_CASE("stage 01: a client that sends its request and shuts its side is answered, then closed", "[stage][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), args_for(dispatch));
  Client c(stage.port());
  c.send(kGet + kGet);
  c.shutdown_write();  // the request and the EOF arrive together
  auto a = c.read_response(), b = c.read_response();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(b->body == "Hello, World!");
  CHECK(c.closed_by_peer(3000ms));  // well before any timeout
}
