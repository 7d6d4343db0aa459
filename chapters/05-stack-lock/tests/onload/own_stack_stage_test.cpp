// chapters/05-stack-lock/tests/onload/own_stack_stage_test.cpp: stage 05's --stack per-worker
// under a fake Onload (LD_PRELOAD of code/net/tests/fake_onload.cpp's library), end to end (chapter 05).
// Role: the binary, not a Worker in a test, claims a stack per worker and moves every socket
// it adopts: each worker says own-stack=yes, and with the pool topology the moves follow the
// round robin (5/5). Kept out of tests/*.cpp: later stages compile those again, without the
// fake's path.
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
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
std::vector<std::uint64_t> per_loop(const nlohmann::json& stats, const std::string& counter, int n) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(n), 0);
  for (const auto& t : stats["threads"]) {
    for (int i = 0; i < n; ++i) {
      if (t["name"] == "loop-" + std::to_string(i)) out[static_cast<std::size_t>(i)] = t["counters"][counter];
    }
  }
  return out;
}

struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
  ~ScopedEnv() { ::unsetenv(name); }
};
}  // namespace

TEST_CASE(
    "stage 05: under a fake Onload, --stack per-worker claims a stack per worker and the pool topology's "
    "sockets are moved 5/5",
    "[stage][ch05]") {
  const std::string stack = GENERATE("per-worker", "shared");
  INFO("--stack " << stack);
  std::unique_ptr<StageProcess> stage;
  {
    ScopedEnv preload("LD_PRELOAD", HANDOFF_FAKE_ONLOAD);  // the child only: this process has started
    stage = std::make_unique<StageProcess>(
        stage_binary(), std::vector<std::string>{"--topology", "pool", "--workers", "2", "--stack", stack});
  }
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 10; ++i) {
    auto c = std::make_unique<Client>(stage->port());
    c->send(get("/"));
    auto r = c->read_response();
    REQUIRE(r);
    CHECK(r->body == "Hello, World!");
    clients.push_back(std::move(c));
  }
  clients.back()->send(get("/stats"));
  auto r = clients.back()->read_response();
  REQUIRE(r);
  const auto stats = nlohmann::json::parse(r->body);
  const std::string err = stage->stderr_text();
  if (stack == "per-worker") {
    CHECK(per_loop(stats, "stack_moves", 2) == std::vector<std::uint64_t>{5, 5});
    CHECK(err.find("worker 0 own-stack=yes (stack w0)") != std::string::npos);
    CHECK(err.find("worker 1 own-stack=yes (stack w1)") != std::string::npos);
  } else {
    CHECK(per_loop(stats, "stack_moves", 2) == std::vector<std::uint64_t>{0, 0});
    CHECK(err.find("own-stack") == std::string::npos);
  }
  CHECK(err.find("Onload not loaded") == std::string::npos);
  stage->signal(SIGTERM);
  CHECK(stage->wait_exit(std::chrono::seconds(5)) == 0);
}

TEST_CASE("stage 05: under a fake Onload that refuses a stack, --stack per-worker is one line and exit 71",
          "[stage][ch05]") {
  const auto run = handoff::testkit::run_to_exit(
      stage_binary(), {"--stack", "per-worker", "--workers", "2", "--port", "0"}, std::chrono::seconds(10),
      {"/usr/bin/env", std::string("LD_PRELOAD=") + HANDOFF_FAKE_ONLOAD, "HANDOFF_FAKE_ONLOAD_REFUSE_STACKNAME=1"});
  INFO("stderr: " << run.err);
  REQUIRE(run.status.has_value());
  CHECK(*run.status == 71);
  CHECK(run.out.empty());  // no readiness line: the start failed before it
  // The first worker to be refused says it; the other is stopped with it, silently.
  CHECK(run.err.rfind("handoff: cannot claim Onload stack w", 0) == 0);
  CHECK(run.err.find(": onload_set_stackname: Device or resource busy\n") != std::string::npos);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}
