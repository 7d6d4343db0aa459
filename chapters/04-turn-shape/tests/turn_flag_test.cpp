// chapters/04-turn-shape/tests/turn_flag_test.cpp: stage 04 end to end, through the real
// binary: both turn shapes serve the earlier stages' paths in order, and on those paths the
// worker's event loop runs no callback (connections and completions are served inside its
// poll), so the turn shape cannot change them (chapter 04).
#include <catch2/catch.hpp>
#include <chrono>
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
/// One counter of the loop thread, from /stats.
std::uint64_t loop_counter(int port, const std::string& name) {
  Client c(port);
  c.send(get("/stats"));
  auto r = c.read_response();
  REQUIRE(r);
  const auto stats = nlohmann::json::parse(r->body);
  for (const auto& t : stats["threads"]) {
    if (t["name"] == "loop-0") return t["counters"][name].get<std::uint64_t>();
  }
  FAIL("no loop-0 in /stats");
  return 0;
}
}  // namespace

TEST_CASE("stage 04: both turn shapes serve pipelined inline and pooled requests in order, running no callback",
          "[stage][ch04]") {
  const std::string turn = GENERATE("generation", "drain");
  const std::string dispatch = GENERATE("inline", "pool");
  INFO("--turn " << turn << " --dispatch " << dispatch);
  StageProcess stage(stage_binary(),
                     {"--turn", turn, "--dispatch", dispatch, "--blocking-threads", "2", "--pool-all-routes"});
  Client c(stage.port());
  c.send(get("/sleep?ms=50") + get("/json") + get("/"));
  auto a = c.read_response(), b = c.read_response(), d = c.read_response();
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(d);
  CHECK(a->body == "slept 50 ms");
  CHECK(b->body == R"({"message":"Hello, World!"})");
  CHECK(d->body == "Hello, World!");
  CHECK(loop_counter(stage.port(), "loop_callbacks") == 0);
}

TEST_CASE("stage 04: an unknown --turn is refused at start", "[stage][ch04]") {
  CHECK_THROWS_AS(StageProcess(stage_binary(), {"--turn", "sideways"}, std::chrono::seconds(5)),
                  std::runtime_error);
}
