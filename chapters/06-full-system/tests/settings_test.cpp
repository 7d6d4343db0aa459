// chapters/06-full-system/tests/settings_test.cpp: stage 06's settings end to end, through the
// real binary: the full system's defaults, --like's profiles (listed, refused, each one's
// settings), --print-config fed back through --config giving the same settings, the order in
// which a profile, a file and a flag override each other, and the start-up line, /stats and
// /metrics saying which profile runs (chapter 06).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "settings_files.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::get;
using handoff::testkit::run_to_exit;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using handoff::settings_tests::printed;
using handoff::settings_tests::TempFile;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> profiles() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(HANDOFF_PROFILE_DIR)) {
    if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  }
  return names;
}

}  // namespace

TEST_CASE("settings: the full system's defaults are every chapter's winner") {
  const auto d = printed({});
  CHECK(d.at("dispatch") == "\"pool\"");
  CHECK(d.at("stack") == "\"per-worker\"");
  CHECK(d.at("pool-ring") == "\"on\"");
  CHECK(d.at("pool-wake") == "\"elastic\"");
  CHECK(d.at("turn") == "\"generation\"");
  CHECK(d.at("loop-wake-spin-us") == "0");
  CHECK(d.at("topology") == "\"shard\"");
}

TEST_CASE("settings: --like help lists every profile file, and an unknown profile is refused") {
  const auto help = run_to_exit(stage_binary(), {"--like", "help"}, 10s);
  REQUIRE(help.status == 0);
  const auto names = profiles();
  REQUIRE(names.size() >= 7);
  for (const auto& name : names) CHECK(help.out.find("  " + name + " ") != std::string::npos);

  const auto bad = run_to_exit(stage_binary(), {"--like", "seed999-nothing"}, 10s);
  CHECK(bad.status == 64);
  CHECK(bad.err.find("no profile 'seed999-nothing'") != std::string::npos);
  const auto path = run_to_exit(stage_binary(), {"--like", "../profiles/seed000-ring"}, 10s);
  CHECK(path.status == 64);  // a name, not a path
}

TEST_CASE("settings: each profile's --print-config, fed back through --config, gives the same settings") {
  for (const auto& name : profiles()) {
    CAPTURE(name);
    const auto first = run_to_exit(stage_binary(), {"--like", name, "--print-config"}, 10s);
    REQUIRE(first.status == 0);
    CHECK(first.out.rfind("# profile: " + name + "\n", 0) == 0);
    const TempFile file(first.out);
    CHECK(printed({"--config", file.path}) == printed({"--like", name}));
    // Every line of the profile's file is a setting that runs.
    const auto effective = printed({"--like", name});
    std::ifstream in(std::string(HANDOFF_PROFILE_DIR) + "/" + name + ".toml");
    int lines = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      const auto eq = line.find(" = ");
      REQUIRE(eq != std::string::npos);
      CHECK(effective.at(line.substr(0, eq)) == line.substr(eq + 3));
      ++lines;
    }
    CHECK(lines > 0);
  }
}

TEST_CASE("settings: a flag overrides a --config file, which overrides the profile") {
  const auto ring = printed({"--like", "seed000-ring"});
  CHECK(ring.at("pool-wake") == "\"shared\"");
  CHECK(ring.at("pool-all-routes") == "true");
  const TempFile chained("pool-wake = \"chained\"\nblocking-threads = 3\n");
  const auto filed = printed({"--like", "seed000-ring", "--config", chained.path});
  CHECK(filed.at("pool-wake") == "\"chained\"");
  CHECK(filed.at("blocking-threads") == "3");
  CHECK(filed.at("pool-all-routes") == "true");  // the profile's, not overridden
  const auto flagged = printed({"--like", "seed000-ring", "--config", chained.path, "--pool-wake", "elastic"});
  CHECK(flagged.at("pool-wake") == "\"elastic\"");
  CHECK(flagged.at("blocking-threads") == "3");
  // Of two files, the later one wins.
  const TempFile two("blocking-threads = 5\n");
  CHECK(printed({"--config", chained.path, "--config", two.path}).at("blocking-threads") == "5");
  CHECK(printed({"--config", two.path, "--config", chained.path}).at("blocking-threads") == "3");
  // A key no option has is an error, not a silent typo.
  const TempFile typo("pool-wak = \"chained\"\n");
  CHECK(run_to_exit(stage_binary(), {"--config", typo.path}, 10s).status != 0);
}

TEST_CASE("settings: the start-up line, /stats and /metrics say which profile runs") {
  StageProcess server(stage_binary(), {"--like", "seed003-drain", "--turn", "generation"});
  Client client(server.port());
  client.send(get("/stats"));
  auto stats = client.read_response();
  REQUIRE(stats);
  const auto settings = nlohmann::json::parse(stats->body).at("settings");
  CHECK(settings.at("profile") == "seed003-drain");
  CHECK(settings.at("given").at("turn") == "generation");  // the flag over the profile
  CHECK(settings.at("given").at("hand-in") == "coordinator");
  CHECK(server.stderr_text().find("handoff: profile seed003-drain; set:") != std::string::npos);

  client.send(get("/metrics"));
  auto metrics = client.read_response();
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->body.find("handoff_settings_info{") != std::string::npos);
  CHECK(metrics->body.find("profile=\"seed003-drain\"") != std::string::npos);
  CHECK(metrics->body.find("# TYPE handoff_requests_total counter\n") != std::string::npos);
}
