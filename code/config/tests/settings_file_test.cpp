// config/tests/settings_file_test: a settings file is read strictly (chapter 06; issue 38).
// Role: each thing an operator gets wrong in a file is refused with the file, line and column
// (TOML that does not parse, a key no setting has with the nearest that does, a table, a
// date), a missing file and a directory are refused by name, a byte-order mark is accepted,
// and a value reaches the flag's parser as the flag's text.
#include "config/settings_file.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

using handoff::config::FileSetting;
using handoff::config::nearest_name;
using handoff::config::parse_settings;
using handoff::config::read_settings_file;
using handoff::config::SettingsFileError;

namespace {
const std::vector<std::string> kKnown{"workers", "max-body", "host", "pool-wake", "stats", "pool-spin-us"};

/// The one line a refusal gives, or "" when `text` is accepted.
std::string refusal(const std::string& text) {
  try {
    parse_settings(text, "f.toml", kKnown);
  } catch (const SettingsFileError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("settings_file: each value reaches the flag's parser as the flag's text", "[unit][ch06]") {
  const auto s = parse_settings("workers = 2\nhost = \"::1\"\nstats = true\npool-spin-us = 2.5\nmax-body = -1\n",
                                "f.toml", kKnown);
  REQUIRE(s.size() == 5);
  CHECK(s[0].key == "workers");
  CHECK(s[0].values == std::vector<std::string>{"2"});
  CHECK(s[1].values == std::vector<std::string>{"::1"});
  CHECK(s[2].values == std::vector<std::string>{"true"});
  CHECK(s[3].values == std::vector<std::string>{"2.5"});
  CHECK(s[4].values == std::vector<std::string>{"-1"});  // the flag's range refuses it, not the file's reader
  CHECK(s[4].line == 5);
  // TOML's own inf and nan reach the flag's check as text it refuses.
  CHECK(parse_settings("pool-spin-us = inf\n", "f.toml", kKnown)[0].values == std::vector<std::string>{"inf"});
}

TEST_CASE("settings_file: malformed TOML is refused with its file, line and column", "[unit][ch06]") {
  CHECK(refusal("workers = [1\n").rfind("f.toml:1:", 0) == 0);  // an unclosed array
  CHECK(refusal("host = \"abc\n").rfind("f.toml:1:", 0) == 0);  // an unclosed string
  CHECK(refusal("workers = 1\njunk line\n").rfind("f.toml:2:", 0) == 0);
  CHECK(refusal("workers = 1\nworkers = 2\n").rfind("f.toml:2:", 0) == 0);  // a key twice
  CHECK(refusal("workers = 1\njunk line\n").find("not TOML") != std::string::npos);
}

TEST_CASE("settings_file: an unknown key or a table is refused, naming the nearest key", "[unit][ch06]") {
  CHECK(refusal("max-bdy = 10\n") == "f.toml:1:1: unknown setting 'max-bdy' (the nearest is 'max-body')");
  CHECK(refusal("workers = 1\n[server]\nworkers = 2\n").rfind("f.toml:2:", 0) == 0);
  CHECK(refusal("[server]\n").find("a table ('server') is not a setting") != std::string::npos);
  CHECK(refusal("when = 1979-05-27\n").find("unknown setting 'when'") != std::string::npos);
  CHECK(refusal("host = 1979-05-27\n").find("not a date or a time") != std::string::npos);
  CHECK(refusal("workers = {a = 1}\n").find("a table") != std::string::npos);
  CHECK(nearest_name("pool-wak", kKnown) == "pool-wake");
}

TEST_CASE("settings_file: a byte-order mark is accepted and the first key kept", "[unit][ch06]") {
  const auto s = parse_settings("\xEF\xBB\xBFworkers = 3\nmax-body = 10\n", "f.toml", kKnown);
  REQUIRE(s.size() == 2);
  CHECK(s[0].key == "workers");
  CHECK(s[0].values == std::vector<std::string>{"3"});
}

TEST_CASE("settings_file: a missing file or a directory is refused by name", "[unit][ch06]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string missing = dir + "/handoff-no-such-" + std::to_string(::getpid()) + ".toml";
  try {
    read_settings_file(missing, kKnown);
    FAIL("a missing file was read");
  } catch (const SettingsFileError& e) {
    CHECK(std::string(e.what()) == missing + ": cannot read: No such file or directory");
  }
  try {
    read_settings_file(dir, kKnown);
    FAIL("a directory was read");
  } catch (const SettingsFileError& e) {
    CHECK(std::string(e.what()) == dir + ": cannot read: Is a directory");
  }
}
