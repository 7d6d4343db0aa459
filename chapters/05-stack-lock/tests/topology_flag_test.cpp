// chapters/05-stack-lock/tests/topology_flag_test.cpp: stage 05 end to end, through the real
// binary: --topology pool deals the connections round robin from one acceptor (the accept
// counters in /stats show it) and serves them as shard does; shard, the default, hands
// nothing off; --stack per-worker without Onload says so once and serves on (chapter 05).
#include <signal.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::get;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;

namespace {
/// One counter of loop-0 .. loop-(n-1) from a /stats body.
std::vector<std::uint64_t> per_loop(const nlohmann::json& stats, const std::string& counter, int n) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(n), 0);
  for (const auto& t : stats["threads"]) {
    for (int i = 0; i < n; ++i) {
      if (t["name"] == "loop-" + std::to_string(i)) out[static_cast<std::size_t>(i)] = t["counters"][counter];
    }
  }
  return out;
}

/// Ten connections, one after another, each answered; then /stats on the last one (a new
/// connection would be adopted, and counted, before it answered).
nlohmann::json ten_answered_then_stats(int port) {
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 10; ++i) {
    auto c = std::make_unique<Client>(port);
    c->send(get("/json") + get("/"));  // pipelined, on every connection
    auto a = c->read_response(), b = c->read_response();
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->body == R"({"message":"Hello, World!"})");
    CHECK(b->body == "Hello, World!");
    clients.push_back(std::move(c));
  }
  clients.back()->send(get("/stats"));
  auto r = clients.back()->read_response();
  REQUIRE(r);
  return nlohmann::json::parse(r->body);
}

/// Sets an environment variable for the scope (a child started meanwhile inherits it).
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
};
}  // namespace

TEST_CASE(
    "stage 05: with --topology pool and two workers, ten connections are dealt 5/5 by one acceptor and every "
    "request is answered",
    "[stage][ch05]") {
  const std::string dispatch = GENERATE("inline", "pool");
  INFO("--dispatch " << dispatch);
  StageProcess stage(stage_binary(), {"--topology", "pool", "--workers", "2", "--dispatch", dispatch,
                                            "--blocking-threads", "2", "--pool-all-routes"});
  const auto stats = ten_answered_then_stats(stage.port());
  CHECK(per_loop(stats, "conns_adopted", 2) == std::vector<std::uint64_t>{5, 5});
  CHECK(per_loop(stats, "accepts", 2) == std::vector<std::uint64_t>{10, 0});
  CHECK(per_loop(stats, "conns_handed_off", 2) == std::vector<std::uint64_t>{5, 0});
  stage.signal(SIGTERM);
  CHECK(stage.wait_exit(std::chrono::seconds(5)) == 0);
}

TEST_CASE("stage 05: HANDOFF_TOPOLOGY=pool overrides the default shard topology", "[stage][ch05]") {
  ScopedEnv env("HANDOFF_TOPOLOGY", "pool");
  StageProcess stage(stage_binary(), {"--workers", "2"});
  const auto stats = ten_answered_then_stats(stage.port());
  CHECK(per_loop(stats, "conns_adopted", 2) == std::vector<std::uint64_t>{5, 5});
  CHECK(per_loop(stats, "accepts", 2) == std::vector<std::uint64_t>{10, 0});
}

TEST_CASE("stage 05: the default shard topology accepts on every worker's own listener and hands nothing off",
          "[stage][ch05]") {
  // The kernel's SO_REUSEPORT hash spreads the connections: no split is asserted, only that
  // each worker adopted what it accepted itself.
  StageProcess stage(stage_binary(), {"--workers", "2"});
  const auto stats = ten_answered_then_stats(stage.port());
  const auto accepts = per_loop(stats, "accepts", 2);
  CHECK(per_loop(stats, "conns_adopted", 2) == accepts);
  CHECK(accepts[0] + accepts[1] == 10);
  CHECK(per_loop(stats, "conns_handed_off", 2) == std::vector<std::uint64_t>{0, 0});
}

TEST_CASE("stage 05: --stack per-worker without Onload says own-stack=no once and serves as before", "[stage][ch05]") {
  const std::string topology = GENERATE("shard", "pool");
  StageProcess stage(stage_binary(), {"--stack", "per-worker", "--workers", "2", "--topology", topology});
  const auto stats = ten_answered_then_stats(stage.port());
  CHECK(per_loop(stats, "stack_moves", 2) == std::vector<std::uint64_t>{0, 0});
  const std::string err = stage.stderr_text();
  const std::string line = "own-stack=no (Onload not loaded)";
  const auto first = err.find(line);
  CHECK(first != std::string::npos);
  CHECK(err.find(line, first + 1) == std::string::npos);
  CHECK(err.find("own-stack=yes") == std::string::npos);
}

TEST_CASE("stage 05: an unknown --topology or --stack is refused at start", "[stage][ch05]") {
  CHECK_THROWS_AS(StageProcess(stage_binary(), {"--topology", "mesh"}, std::chrono::seconds(5)),
                  std::runtime_error);
  CHECK_THROWS_AS(StageProcess(stage_binary(), {"--stack", "per-thread"}, std::chrono::seconds(5)),
                  std::runtime_error);
}
