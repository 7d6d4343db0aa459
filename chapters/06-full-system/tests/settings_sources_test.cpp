// chapters/06-full-system/tests/settings_sources_test.cpp: one way to read a setting, whatever
// its source (chapter 06; issue 38).
// Role: through the real binary, every numeric setting --print-config lists is refused the
// same way from a flag, a settings file and the environment (a negative, not a number, nan,
// inf, an absurd size or time): one line naming the setting, where the value came from and
// what it takes, a documented status, and no server; every choice refuses a word it does
// not have the same way. A settings file that cannot be used exits 78 with one line naming
// the file (and the line and column); a byte-order mark is accepted. A flag wins over the
// environment, which wins over a file, which wins over a profile.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "settings_files.h"
#include "testkit/stage_process.h"

using handoff::settings_tests::printed;
using handoff::settings_tests::TempFile;
using handoff::testkit::FinishedRun;
using handoff::testkit::run_to_exit;
using handoff::testkit::stage_binary;
using namespace std::chrono_literals;

namespace {

std::string env_name(const std::string& key) {
  std::string name = "HANDOFF_";
  for (char c : key) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

bool is_number(const std::string& text) {
  return !text.empty() && text.find_first_not_of("-+.0123456789e") == std::string::npos;
}

/// A refusal as the operator sees it: one line on stderr, the status, nothing served.
void check_refused(const FinishedRun& run, const std::string& key, const std::string& source) {
  INFO("stderr: " << run.err << "stdout: " << run.out);
  REQUIRE(run.status.has_value());
  CHECK((*run.status == 104 || *run.status == 105));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(run.err.rfind("handoff: bad setting --" + key + " (from " + source, 0) == 0);
  CHECK(run.out.find("listening") == std::string::npos);
}

/// The three sources of a setting.
enum class Source { flag, env, file };

/// Refused from `source`, as the operator sees it.
void check_refused_from(Source source, const std::string& key, const std::string& value) {
  CAPTURE(key, value);
  // Should the refusal fail, a server on a free port, not on 8080 (a flag would hide --port's
  // other sources).
  std::vector<std::string> args;
  if (key != "port") args = {"--port", "0"};
  switch (source) {
    case Source::flag:
      args.insert(args.end(), {"--" + key, value});
      check_refused(run_to_exit(stage_binary(), args, 10s), key, "the command line");
      break;
    case Source::env:
      check_refused(run_to_exit(stage_binary(), args, 10s, {"/usr/bin/env", env_name(key) + "=" + value}), key,
                    "environment " + env_name(key));
      break;
    case Source::file: {
      // As an operator would write it: a number bare (TOML's own nan and inf included), a word quoted.
      const bool bare = is_number(value) || value == "nan" || value == "inf";
      const TempFile file("# an operator's file\n" + key + " = " + (bare ? value : "\"" + value + "\"") + "\n");
      args.insert(args.end(), {"--config", file.path});
      check_refused(run_to_exit(stage_binary(), args, 10s), key, "config file " + file.path + ", line 2");
      break;
    }
  }
}

/// Refused from each of the three sources, the same way.
void check_refused_everywhere(const std::string& key, const std::string& value) {
  for (const Source source : {Source::flag, Source::env, Source::file}) check_refused_from(source, key, value);
}

}  // namespace

TEST_CASE(
    "settings sources: every numeric setting refuses the same bad values from a flag, a file and the "
    "environment") {
  const auto settings = printed({});
  // Each setting gets every bad value, each from one source, the source turning with the
  // setting, so that every source meets every kind of bad value over the settings (and the
  // run stays short under a sanitizer: a refusal is one process).
  // -5 rather than -1: --stack-buzz-us takes -1 (spin for ever), and nothing takes -5.
  const std::vector<std::string> bad{"-5", "abc", "nan", "1e300", "99999999999"};
  const Source sources[] = {Source::flag, Source::env, Source::file};
  int numeric = 0;
  for (const auto& [key, value] : settings) {
    if (!is_number(value)) continue;
    for (std::size_t i = 0; i < bad.size(); ++i) check_refused_from(sources[(i + numeric) % 3], key, bad[i]);
    ++numeric;
  }
  CHECK(numeric >= 20);  // the limits, timeouts, threads, spins and the stack lock's knobs
  // The operator's own case: a negative body limit, from each source.
  check_refused_everywhere("max-body", "-1");
}

TEST_CASE(
    "settings sources: every choice refuses a word it does not have, from a flag, a file or the "
    "environment") {
  int choices = 0;
  for (const auto& [key, value] : printed({})) {
    if (value.empty() || value[0] != '"' || key == "host" || key == "pg") continue;  // free text
    check_refused_from(Source(choices % 3), key, "sideways");
    ++choices;
  }
  CHECK(choices >= 8);
  // A boolean refuses what is not one.
  check_refused(run_to_exit(stage_binary(), {"--port", "0"}, 10s, {"/usr/bin/env", "HANDOFF_STATS=maybe"}), "stats",
                "environment HANDOFF_STATS");
}

TEST_CASE(
    "settings sources: a flag wins over the environment, which wins over a file, which wins over a "
    "profile") {
  const TempFile file("blocking-threads = 3\npool-wake = \"chained\"\nworkers = 2\n");
  const auto p = printed({"--like", "seed000-ring", "--config", file.path, "--blocking-threads", "5"},
                         {"HANDOFF_BLOCKING_THREADS=4", "HANDOFF_POOL_WAKE=elastic"});
  CHECK(p.at("blocking-threads") == "5");     // the flag over the environment
  CHECK(p.at("pool-wake") == "\"elastic\"");  // the environment over the file
  CHECK(p.at("workers") == "2");              // the file over the profile's 1
  CHECK(p.at("pool-all-routes") == "true");   // the profile's, which nothing else set
  // An empty variable is not set.
  CHECK(printed({"--config", file.path}, {"HANDOFF_WORKERS="}).at("workers") == "2");
}

TEST_CASE("settings sources: a settings file that cannot be used exits 78 with one line naming it") {
  auto check_78 = [](const std::vector<std::string>& args, const std::string& starts) {
    const auto run = run_to_exit(stage_binary(), args, 10s);
    INFO(run.err);
    CHECK(run.status == 78);
    CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
    CHECK(run.err.rfind("handoff: bad config file " + starts, 0) == 0);
    CHECK(run.out.find("listening") == std::string::npos);
  };
  const std::string dir = std::filesystem::temp_directory_path().string();
  check_78({"--config", dir}, dir + ": cannot read: Is a directory");
  check_78({"--config", dir + "/handoff-none.toml"}, dir + "/handoff-none.toml: cannot read: No such file");
  const TempFile unclosed_array("workers = [\n");
  check_78({"--config", unclosed_array.path}, unclosed_array.path + ":1:");
  const TempFile unclosed_string("host = \"127.0.0.1\n");
  check_78({"--config", unclosed_string.path}, unclosed_string.path + ":1:");
  const TempFile junk("workers = 1\nthis is not toml\n");
  check_78({"--config", junk.path}, junk.path + ":2:");
  const TempFile typo("workers = 1\nmax-bdy = 10\n");
  check_78({"--config", typo.path}, typo.path + ":2:1: unknown setting 'max-bdy' (the nearest is 'max-body')");
  const TempFile table("[server]\nworkers = 1\n");
  check_78({"--config", table.path}, table.path + ":1:");
  const TempFile not_settable("like = \"seed000-ring\"\n");
  check_78({"--config", not_settable.path}, not_settable.path + ":1:1: unknown setting 'like'");
  // The later of two files is checked too, and a profile's file like any other.
  check_78({"--like", "seed000-ring", "--config", typo.path}, typo.path + ":2:1");
}

TEST_CASE("settings sources: a file that begins with a byte-order mark keeps its first key") {
  const TempFile bom("\xEF\xBB\xBFworkers = 3\nmax-body = 4096\n");
  const auto p = printed({"--config", bom.path});
  CHECK(p.at("workers") == "3");
  CHECK(p.at("max-body") == "4096");
}
