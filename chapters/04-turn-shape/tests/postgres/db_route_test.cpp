// chapters/04-turn-shape/tests/postgres/db_route_test.cpp: stage 04's GET /db end to end
// against a real PostgreSQL (chapter 04; run inside pg_virtualenv by code/upstream/tests/with_postgres.sh).
// Role: /db answers both queries through the worker's pool and reuses its connection; 30
// concurrent clients on a pool of 4 + 2 never hold more than 6 sessions (the pool's peak and
// pg_stat_activity); /stats carries the pool's counters, a timeout included; a client that
// leaves mid-query leaves the connection checked in; SIGTERM waits for a query in flight, and
// a drain deadline cuts one short cleanly.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/pg_monitor.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"
#include "testkit/watchdog.h"

using handoff::testkit::Client;
using handoff::testkit::elapsed_ms;
using handoff::testkit::get;
using handoff::testkit::PgMonitor;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using handoff::testkit::Watchdog;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// The stage's upstream, by address (libpq's name lookup would block the loop); pg_virtualenv's
// PG* variables, inherited by the child, give port, user, password and database.
const std::string kAppName = "handoff-db";

// One worker, so that one pool serves every request; `extra` after the pool's flags.
std::vector<std::string> db_args(const std::string& size, const std::string& overflow,
                                 std::vector<std::string> extra = {}) {
  std::vector<std::string> a{
      "--workers",         "1",     "--pg", "hostaddr=127.0.0.1 application_name=" + kAppName, "--pg-pool-size", size,
      "--pg-max-overflow", overflow};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The loop thread's counters from /stats.
nlohmann::json loop_counters(int port) {
  Client c(port);
  c.send(get("/stats"));
  auto r = c.read_response();
  REQUIRE(r);
  const auto stats = nlohmann::json::parse(r->body);
  for (const auto& t : stats["threads"]) {
    if (t["name"] == "loop-0") return t["counters"];
  }
  FAIL("no loop-0 in /stats");
  return {};
}

long sessions_now(PgMonitor& m) {
  return m.number("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + kAppName + "'");
}

// Wait (at most 5 s) until the stage has no session left; the count then.
long sessions_when_gone(PgMonitor& m) {
  const auto deadline = Clock::now() + 5s;
  while (sessions_now(m) > 0 && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
  return sessions_now(m);
}

}  // namespace

TEST_CASE("stage 04 with --pg: /db answers both queries on one pooled connection, reused by the next request",
          "[stage][ch04][postgres]") {
  Watchdog dog(30s, "/db answers");
  StageProcess stage(stage_binary(), db_args("4", "2"));
  Client c(stage.port());
  c.send(get("/db?n=41"));
  auto first = c.read_response();
  REQUIRE(first);
  REQUIRE(first->status == 200);
  const auto a = nlohmann::json::parse(first->body);
  CHECK(a["one"] == "1");
  CHECK(a["two"] == "42");
  CHECK(a["backend_pid"].get<int>() > 0);
  c.send(get("/db"));
  auto second = c.read_response();
  REQUIRE(second);
  REQUIRE(second->status == 200);
  const auto b = nlohmann::json::parse(second->body);
  CHECK(b["two"] == "2");                       // n defaults to 1
  CHECK(b["backend_pid"] == a["backend_pid"]);  // the connection went back to the pool
  const auto counters = loop_counters(stage.port());
  CHECK(counters["pg_opened"] == 1);
  CHECK(counters["pg_checkouts"] == 2);
  CHECK(counters["pg_waits"] == 0);
  CHECK(counters["pg_closed_on_checkin"] == 0);
  CHECK(counters["pg_timeouts"] == 0);
}

TEST_CASE("stage 04 with --pg: 30 concurrent clients on a pool of 4 + 2 never hold more than 6 sessions",
          "[stage][ch04][postgres]") {
  Watchdog dog(60s, "30 clients on 4 + 2");
  PgMonitor m;
  StageProcess stage(stage_binary(), db_args("4", "2"));
  constexpr int kClients = 30, kEach = 10;
  std::atomic<int> ok{0}, bad{0}, running{kClients};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      try {
        Client c(stage.port());
        for (int k = 0; k < kEach; ++k) {
          c.send(get("/db?sleep_ms=3&n=" + std::to_string(i)));
          auto r = c.read_response(20s);
          const bool right = r && r->status == 200 && nlohmann::json::parse(r->body)["two"] == std::to_string(i + 1);
          (right ? ok : bad).fetch_add(1, std::memory_order_relaxed);  // relaxed: read after join
        }
      } catch (...) {
        bad.fetch_add(1, std::memory_order_relaxed);
      }
      running.fetch_sub(1, std::memory_order_release);  // pairs with the acquire below
    });
  }
  long most = 0;  // the most sessions PostgreSQL showed at once while the clients ran
  while (running.load(std::memory_order_acquire) > 0) {
    most = std::max(most, sessions_now(m));
    std::this_thread::sleep_for(2ms);
  }
  for (auto& t : clients) t.join();
  CHECK(ok.load() == kClients * kEach);
  CHECK(bad.load() == 0);
  const auto counters = loop_counters(stage.port());
  INFO("counters: " << counters.dump());
  CHECK(counters["pg_checkouts"] == kClients * kEach);
  CHECK(counters["pg_peak_open"] == 6);  // the pool filled: the bound is what held it
  CHECK(counters["pg_waits"] > 0);
  CHECK(most >= 1);
  CHECK(most <= 6);
}

TEST_CASE("stage 04 with --pg: /stats counts a checkout that timed out, which /db answers 503",
          "[stage][ch04][postgres]") {
  Watchdog dog(30s, "/db timeout");
  StageProcess stage(stage_binary(), db_args("1", "0", {"--pg-timeout-ms", "100"}));
  Client slow(stage.port()), late(stage.port());
  slow.send(get("/db?sleep_ms=1000"));
  std::this_thread::sleep_for(200ms);  // the slow one holds the only connection
  late.send(get("/db"));
  auto refused = late.read_response(5s);
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->body.find("timed out") != std::string::npos);
  auto served = slow.read_response(5s);
  REQUIRE(served);
  CHECK(served->status == 200);
  const auto counters = loop_counters(stage.port());
  CHECK(counters["pg_checkouts"] == 2);
  CHECK(counters["pg_waits"] == 1);
  CHECK(counters["pg_timeouts"] == 1);
  CHECK(counters["pg_opened"] == 1);
}

TEST_CASE("stage 04 with --pg: a client that closes mid-query leaves its connection checked in for the next",
          "[stage][ch04][postgres]") {
  Watchdog dog(30s, "client gone mid-query");
  PgMonitor m;
  StageProcess stage(stage_binary(), db_args("4", "2"));
  {
    Client gone(stage.port());
    gone.send(get("/db?sleep_ms=300"));
    std::this_thread::sleep_for(100ms);  // the query is in flight
    gone.reset();
  }
  // The handler runs on after its client has gone; its answer goes nowhere, its connection back.
  const auto deadline = Clock::now() + 5s;
  while (loop_counters(stage.port())["pg_checkouts"] == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  Client next(stage.port());
  next.send(get("/db?n=7"));
  auto r = next.read_response();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(nlohmann::json::parse(r->body)["two"] == "8");
  const auto counters = loop_counters(stage.port());
  CHECK(counters["pg_checkouts"] == 2);
  CHECK(counters["pg_opened"] == 1);  // the first request's connection served the second
  CHECK(counters["pg_closed_broken"] == 0);
  CHECK(sessions_now(m) == 1);
  CHECK_FALSE(stage.wait_exit(0ms));
}

TEST_CASE("stage 04 with --pg: SIGTERM waits for a query in flight, which answers, then the sessions close",
          "[stage][ch04][postgres]") {
  Watchdog dog(30s, "drain with a query in flight");
  PgMonitor m;
  StageProcess stage(stage_binary(), db_args("4", "2"));
  Client c(stage.port());
  c.send(get("/db?sleep_ms=400&n=1"));
  std::this_thread::sleep_for(150ms);  // connected, and the first statement in flight
  REQUIRE(sessions_now(m) == 1);
  stage.signal(SIGTERM);
  auto r = c.read_response(5s);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(nlohmann::json::parse(r->body)["two"] == "2");
  const auto code = stage.wait_exit(5s);
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK(sessions_when_gone(m) == 0);
}

TEST_CASE("stage 04 with --pg: a query still running at the drain deadline is cut short and the process exits 0",
          "[stage][ch04][postgres]") {
  Watchdog dog(30s, "drain deadline mid-query");
  PgMonitor m;
  StageProcess stage(stage_binary(), db_args("4", "2", {"--drain-timeout-ms", "200"}));
  Client c(stage.port());
  c.send(get("/db?sleep_ms=2000"));
  std::this_thread::sleep_for(150ms);
  const auto start = Clock::now();
  stage.signal(SIGTERM);
  CHECK(c.closed_by_peer(3s));  // unanswered: the coroutine was destroyed mid-query
  const auto code = stage.wait_exit(5s);
  REQUIRE(code);
  CHECK(*code == 0);
  CHECK(elapsed_ms(start) < 3000);
  CHECK(stage.stderr_text().find("still busy") == std::string::npos);
  // The lease closed the busy connection; PostgreSQL ends the session once its pg_sleep
  // returns and finds the client gone (it does not watch the socket while a statement runs).
  CHECK(sessions_when_gone(m) == 0);
}
