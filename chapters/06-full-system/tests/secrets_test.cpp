// chapters/06-full-system/tests/secrets_test.cpp: a --pg password reaches no output (chapter 06;
// issue 38).
// Role: a password planted in the connection string, given as a flag, in a settings file and
// through HANDOFF_PG, in libpq's keyword form and its URI form, is absent from everything the
// stage writes or serves: its start-up lines on stdout and stderr, /stats, /metrics, /db's
// answer (the upstream is a closed port, so the reason is libpq's) and --print-config, which
// shows it as `***` instead. The way to give a password is a password file (PGPASSFILE).
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::get;
using handoff::testkit::run_to_exit;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;

#if HANDOFF_HAVE_LIBPQ

namespace {

constexpr const char* kPlanted = "Planted-Pw-7c1e";

/// Everything a stage started with `args` (and HANDOFF_PG = `env_pg` when not empty) shows.
std::string everything_shown(const std::vector<std::string>& args, const std::string& env_pg = "") {
  if (!env_pg.empty()) ::setenv("HANDOFF_PG", env_pg.c_str(), 1);
  std::string shown;
  {
    StageProcess server(stage_binary(), args);
    Client client(server.port());
    for (const char* path : {"/stats", "/metrics", "/db"}) {
      client.send(get(path));
      const auto response = client.read_response(10s);
      REQUIRE(response);
      shown += response->body;
    }
    server.signal(SIGTERM);
    CHECK(server.wait_exit(10s).has_value());
    shown += server.stderr_text();
  }
  std::vector<std::string> print = args;
  print.push_back("--print-config");
  const auto printed = run_to_exit(stage_binary(), print, 10s);
  CHECK(printed.status == 0);
  CHECK(printed.out.find("***") != std::string::npos);  // shown, hidden
  shown += printed.out + printed.err;
  ::unsetenv("HANDOFF_PG");
  return shown;
}

}  // namespace

TEST_CASE("secrets: a planted --pg password is absent from every output, from every source and in both forms") {
  const std::string keyword = std::string("hostaddr=127.0.0.1 port=1 user=app password=") + kPlanted;
  const std::string quoted = std::string("hostaddr=127.0.0.1 port=1 password='") + kPlanted + " x'";
  const std::string uri = std::string("postgresql://app:") + kPlanted + "@127.0.0.1:1/app?password=" + kPlanted;
  for (const auto& conninfo : {keyword, quoted, uri}) {
    CAPTURE(conninfo);
    CHECK(everything_shown({"--pg", conninfo}).find(kPlanted) == std::string::npos);
    CHECK(everything_shown({}, conninfo).find(kPlanted) == std::string::npos);
    const auto file =
        (std::filesystem::temp_directory_path() / ("handoff-secret-" + std::to_string(::getpid()) + ".toml")).string();
    std::ofstream(file) << "pg = \"" << conninfo << "\"\n";  // no '"' or '\\' in these
    CHECK(everything_shown({"--config", file}).find(kPlanted) == std::string::npos);
    std::filesystem::remove(file);
  }
}

TEST_CASE("secrets: --print-config and /stats show the password as ***, the rest as given") {
  const auto printed = run_to_exit(
      stage_binary(), {"--pg", std::string("hostaddr=127.0.0.1 port=1 password=") + kPlanted, "--print-config"}, 10s);
  REQUIRE(printed.status == 0);
  CHECK(printed.out.find("pg=\"hostaddr=127.0.0.1 port=1 password=***\"") != std::string::npos);
}

#else

TEST_CASE("secrets: skipped, this build has no libpq and so no --pg") { SUCCEED("no --pg without libpq"); }

#endif
