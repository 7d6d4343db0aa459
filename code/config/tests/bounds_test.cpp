// config/tests/bounds_test: a numeric setting's text is checked before it is converted
// (chapter 06; issue 38).
// Role: the values an operator's typo or an attacker's environment brings (a negative size,
// not a number, nan, inf, 1e300, trailing junk, a fraction for a count) are refused with what
// was expected and what came; a value inside the range passes unchanged.
#include "config/bounds.h"

#include <catch2/catch.hpp>
#include <string>

using handoff::config::integer_in;
using handoff::config::number_in;

namespace {
/// The validator's refusal of `text`, "" when it passes.
std::string check(const CLI::Validator& v, std::string text) { return v(text); }
}  // namespace

TEST_CASE("bounds: a count refuses what is not a whole number in its range", "[unit][ch06]") {
  const auto v = integer_in(0, 1 << 30);
  CHECK(check(v, "0").empty());
  CHECK(check(v, "1048576").empty());
  CHECK(check(v, "-1") == "expected an integer from 0 to 1073741824, got '-1'");
  for (const char* bad : {"abc", "", "1.5", "1e3", "nan", "inf", "12abc", " 12", "99999999999999999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(check(v, bad).empty());
  }
}

TEST_CASE("bounds: a time refuses what is not a finite number in its range", "[unit][ch06]") {
  const auto v = number_in(0, 100'000);
  CHECK(check(v, "2.5").empty());
  CHECK(check(v, "100000").empty());
  for (const char* bad : {"abc", "-5", "nan", "inf", "-inf", "1e300", "1e12", "1e-999999", "5us", ""}) {
    CAPTURE(bad);
    CHECK_FALSE(check(v, bad).empty());
  }
  CHECK(check(v, "1e12") == "expected a number from 0 to 100000, got '1e12'");
}

TEST_CASE("bounds: a bound written as a fraction admits the same text (compared as the flag's double)",
          "[unit][ch06]") {
  const auto v = number_in(0.05, 600);
  CHECK(check(v, "0.05").empty());
  CHECK(check(v, "600").empty());
  CHECK(check(v, "0.0499") == "expected a number from 0.05 to 600, got '0.0499'");
}
