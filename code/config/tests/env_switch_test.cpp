// config/tests/env_switch_test: every environment override is read one way (chapter 02;
// issue 26).
// Role: unset and empty leave the flag's value; each kind (a boolean, a number, a choice by
// the flag's words) takes a value the flag would take; a choice the flag would refuse throws
// with the variable's name and what it expected, the line a stage's start then prints.
#include "config/env_switch.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <exception>
#include <map>
#include <string>
#include <vector>

using handoff::config::env_override;

namespace {
constexpr const char* kEnv = "HANDOFF_ENV_SWITCH_TEST";

/// The message `read` throws, or "" when it does not.
template <class F>
std::string refusal(F read) {
  try {
    read();
  } catch (const std::exception& e) {  // CLI::ValidationError, without compiling CLI11 here
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("env_switch: unset or empty, every kind of override leaves the flag's value", "[unit][ch02]") {
  const std::map<std::string, int> words{{"one", 1}, {"two", 2}};
  for (const bool set_empty : {false, true}) {
    if (set_empty) {
      ::setenv(kEnv, "", 1);
    } else {
      ::unsetenv(kEnv);
    }
    CHECK(env_override(kEnv, true));
    CHECK(env_override(kEnv, 2.5) == 2.5);
    CHECK(env_override(kEnv, "--choice", std::vector<std::string>{"a", "b"}, std::string("b")) == "b");
    CHECK(env_override(kEnv, "--choice", words, 2) == 2);
  }
  ::unsetenv(kEnv);
}

TEST_CASE("env_switch: a value the flag takes overrides it", "[unit][ch02]") {
  ::setenv(kEnv, "off", 1);
  CHECK_FALSE(env_override(kEnv, true));
  ::setenv(kEnv, "12.5", 1);
  CHECK(env_override(kEnv, 2.0) == 12.5);
  ::setenv(kEnv, "a", 1);
  CHECK(env_override(kEnv, "--choice", std::vector<std::string>{"a", "b"}, std::string("b")) == "a");
  ::setenv(kEnv, "one", 1);
  CHECK(env_override(kEnv, "--choice", std::map<std::string, int>{{"one", 1}, {"two", 2}}, 2) == 1);
  ::unsetenv(kEnv);
}

TEST_CASE("env_switch: a choice the flag would refuse is refused by name, with what it expected", "[unit][ch02]") {
  ::setenv(kEnv, "sideways", 1);
  const std::string expected = std::string(kEnv) + ": expected a --choice value, got 'sideways'";
  CHECK(refusal([] {
          env_override(kEnv, "--choice", std::vector<std::string>{"a", "b"}, std::string("b"));
        }) == expected);
  CHECK(refusal([] { env_override(kEnv, "--choice", std::map<std::string, int>{{"one", 1}}, 1); }) == expected);
  CHECK(refusal([] { env_override(kEnv, true); }) ==
        std::string(kEnv) + ": expected 0/1/on/off/true/false, got 'sideways'");
  ::unsetenv(kEnv);
}
