// exercises/06-settings-order/tests: with_profile()'s arguments parsed by CLI11 the way stage
// 06 parses them: a flag over a --config file over the profile, whatever the order on the
// command line, and a profile name that is a path, or names no file, refused.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "profile_args.h"

using exercise::with_profile;

namespace {

/// A folder with one profile (workers = 4, turn = "drain") and one user file (turn =
/// "generation"), removed with the object.
struct Files {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ex-06-settings-" + std::to_string(::getpid()));
  std::string user = (dir / "mine.toml").string();
  Files() {
    std::filesystem::create_directories(dir / "profiles");
    std::ofstream(dir / "profiles" / "busy.toml") << "# a profile\nworkers = 4\nturn = \"drain\"\n";
    std::ofstream(user) << "turn = \"generation\"\n";
    std::ofstream(dir / "secret.toml") << "workers = 9\n";
  }
  ~Files() { std::filesystem::remove_all(dir); }
  std::string profiles() const { return (dir / "profiles").string(); }
};

struct Settings {
  int workers = 1;
  std::string turn = "generation";
};

/// Parse `args` (after with_profile) as stage 06 does: options, repeatable --config, --like.
Settings parse(const std::vector<std::string>& args) {
  CLI::App app{"test"};
  Settings s;
  std::string like;
  app.add_option("--workers", s.workers);
  app.add_option("--turn", s.turn);
  app.set_config("--config")->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--like", like)->configurable(false);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
  app.parse(reversed);
  return s;
}

}  // namespace

TEST_CASE("settings order: the profile's settings apply when nothing else sets them") {
  const Files f;
  const auto args = with_profile({"--like", "busy"}, f.profiles());
  REQUIRE(args);
  const Settings s = parse(*args);
  CHECK(s.workers == 4);
  CHECK(s.turn == "drain");
  const auto eq = with_profile({"--like=busy"}, f.profiles());
  REQUIRE(eq);
  CHECK(parse(*eq).workers == 4);
}

TEST_CASE("settings order: a flag overrides the profile") {
  const Files f;
  const auto args = with_profile({"--like", "busy", "--workers", "2"}, f.profiles());
  REQUIRE(args);
  CHECK(parse(*args).workers == 2);
}

TEST_CASE("settings order: a --config file overrides the profile, wherever each is named") {
  const Files f;
  for (const auto& given : {std::vector<std::string>{"--like", "busy", "--config", f.user},
                            std::vector<std::string>{"--config", f.user, "--like", "busy"}}) {
    const auto args = with_profile(given, f.profiles());
    REQUIRE(args);
    const Settings s = parse(*args);
    CHECK(s.turn == "generation");  // the user's file
    CHECK(s.workers == 4);          // the profile's, which the file does not set
  }
}

TEST_CASE("settings order: a profile name that is a path, or names no file, is refused") {
  const Files f;
  CHECK_FALSE(with_profile({"--like", "../secret"}, f.profiles()));
  CHECK_FALSE(with_profile({"--like", "nothing-here"}, f.profiles()));
  const auto none = with_profile({"--workers", "3"}, f.profiles());  // no --like: unchanged
  REQUIRE(none);
  CHECK(*none == std::vector<std::string>{"--workers", "3"});
}
