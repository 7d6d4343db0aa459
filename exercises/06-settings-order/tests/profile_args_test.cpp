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
  INFO("'--like busy' was refused, though DIR/busy.toml is a regular file");
  REQUIRE(args);
  const Settings s = parse(*args);
  INFO("the profile's settings did not reach CLI11: add DIR/NAME.toml as a --config file");
  CHECK(s.workers == 4);
  CHECK(s.turn == "drain");
  const auto eq = with_profile({"--like=busy"}, f.profiles());
  INFO("'--like=busy' (the '=' form) must name the profile as '--like busy' does");
  REQUIRE(eq);
  CHECK(parse(*eq).workers == 4);
}

TEST_CASE("settings order: a flag overrides the profile") {
  const Files f;
  const auto args = with_profile({"--like", "busy", "--workers", "2"}, f.profiles());
  REQUIRE(args);
  INFO("a flag on the command line must beat the profile's file");
  CHECK(parse(*args).workers == 2);
}

TEST_CASE("settings order: a --config file overrides the profile, wherever each is named") {
  const Files f;
  for (const auto& given : {std::vector<std::string>{"--like", "busy", "--config", f.user},
                            std::vector<std::string>{"--config", f.user, "--like", "busy"}}) {
    const auto args = with_profile(given, f.profiles());
    REQUIRE(args);
    const Settings s = parse(*args);
    INFO("with " << given[0] << " named first: the operator's --config file must beat the profile; CLI11 reads "
                    "the last config file first and keeps the first value it sees, so the profile's file goes first");
    CHECK(s.turn == "generation");  // the user's file
    CHECK(s.workers == 4);          // the profile's, which the file does not set
  }
}

TEST_CASE("settings order: a profile name that is a path, or names no file, is refused") {
  const Files f;
  // Every refusal below is a name an operator or an attacker can put after --like; each
  // one's file exists (but for the typo), so only a refusal keeps it from being read.
  std::filesystem::create_directories(f.dir / "profiles" / "nested");
  std::ofstream(f.dir / "profiles" / "nested" / "x.toml") << "workers = 9\n";
  std::filesystem::create_directories(f.dir / "profiles" / "folder.toml");
  const std::string absolute = (f.dir / "secret").string();  // DIR/secret.toml exists
  const struct {
    std::vector<std::string> args;
    const char* lesson;
  } refused[] = {
      {{"--like", "../secret"},
       "'--like ../secret' was accepted: a profile name with a path separator reaches outside the profiles' folder"},
      {{"--like=../secret"}, "'--like=../secret' was accepted: the '=' form must be refused as the spaced one is"},
      {{"--like", absolute},
       "'--like /an/absolute/path' was accepted: joining an absolute path to the folder gives the absolute path, so "
       "any .toml on the machine could be read; refuse every name with a '/', not only '..'"},
      {{"--like", "nested/x"},
       "'--like nested/x' was accepted: a name is one plain name; refuse any path separator, not only '..' or a "
       "leading '/'"},
      {{"--like", "folder"},
       "'--like folder' was accepted, where DIR/folder.toml is a directory: check for a regular file "
       "(std::filesystem::is_regular_file), not only that something exists"},
      {{"--like", "nothing-here"},
       "'--like nothing-here' was accepted: a name with no file behind it is a typo, refused at start, not run as "
       "the defaults"},
  };
  for (const auto& r : refused) {
    INFO(r.lesson);
    CHECK_FALSE(with_profile(r.args, f.profiles()));
  }
  const auto none = with_profile({"--workers", "3"}, f.profiles());  // no --like: unchanged
  INFO("without --like the arguments must come back unchanged");
  REQUIRE(none);
  CHECK(*none == std::vector<std::string>{"--workers", "3"});
}
