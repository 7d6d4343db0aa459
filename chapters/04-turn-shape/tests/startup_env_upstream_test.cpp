// chapters/04-turn-shape/tests/startup_env_upstream_test.cpp: how stage 04 starts, end to
// end: an environment override it cannot use is a failed start (one line, exit 64), and an
// upstream that refuses connections is not: one warning line, then /stats and /db give the
// same reason while the pools keep trying (chapter 04). Later stages compile these again.
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "net/listener.h"
#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::testkit::stage_binary;
using handoff::testkit::Client;
using handoff::testkit::get;
using handoff::testkit::run_to_exit;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;

TEST_CASE("stage 04: an environment override with an unknown value is refused as the flag's, in one line, not an "
          "abort",
          "[stage][ch04]") {
  const auto run = run_to_exit(stage_binary(), {"--port", "0"}, 10s, {"/usr/bin/env", "HANDOFF_TURN=sideways"});
  INFO("stderr: " << run.err);
  REQUIRE(run.status.has_value());
  CHECK(*run.status == 105);  // CLI11's status for a value a check refuses, as for --turn sideways
  CHECK(run.out.empty());
  CHECK(run.err == "handoff: bad setting --turn (from environment HANDOFF_TURN): sideways not in {drain,generation}\n");
}

#if HANDOFF_HAVE_LIBPQ
TEST_CASE("stage 04 with --pg: an upstream that refuses at start is one warning line, and /stats and /db say why",
          "[stage][ch04]") {
  // A port nothing listens on: opened, then closed (a connect to it is refused at once).
  const std::string port = std::to_string(handoff::net::Listener::open("127.0.0.1", 0, false).port());
  StageProcess stage(stage_binary(),
                     {"--pg", "host=127.0.0.1 port=" + port + " user=nobody dbname=nothing connect_timeout=2"});
  const std::string err = stage.stderr_text();
  INFO("stderr: " << err);
  const std::string warning = "handoff: warning: upstream unreachable at start: ";
  const auto at = err.find(warning);
  REQUIRE(at != std::string::npos);
  CHECK(err.find(warning, at + 1) == std::string::npos);  // one line, not one per worker
  CHECK(err.find("Connection refused", at) != std::string::npos);

  Client c(stage.port());
  c.send(get("/stats"));
  auto stats = c.read_response();
  REQUIRE(stats);
  const auto at_start = nlohmann::json::parse(stats->body)["upstream"];
  CHECK(at_start["state"] == "unreachable");
  CHECK(at_start["since"] == "start");
  CHECK(at_start["error"].get<std::string>().find("Connection refused") != std::string::npos);

  for (int i = 0; i < 2; ++i) {  // the pool tries again at each /db, and says so each time
    c.send(get("/db"));
    auto db = c.read_response();
    REQUIRE(db);
    CHECK(db->status == 503);
    c.send(get("/stats"));
    stats = c.read_response();
    REQUIRE(stats);
    const auto now = nlohmann::json::parse(stats->body)["upstream"];
    CHECK(now["state"] == "unreachable");
    CHECK(db->body == "upstream unreachable: " + now["error"].get<std::string>() + "\n");
    CHECK(db->body.find("Connection refused") != std::string::npos);
  }
}
#endif
