// config/bounds: the one check of a numeric setting's value, whatever its source (chapter 06;
// issue 38, after an operator's `--max-body -1` and `HANDOFF_POOL_SPIN_US=1e12`).
// Role: CLI11's Range converts the text before it compares, so `-1` read into a size wraps
// to 2^64-1, `nan` compares false both ways and passes, and `1e300` is a fine double. These
// validators read the text themselves: the whole text must be a finite number (an integer,
// for integer_in), within [lo, hi], or the refusal says what was expected and what came.
// They run on the text before conversion, so a flag, a file's line and an environment
// variable are refused by the same words. Include it only from the files of the cli11 unity
// group (code/CMakeLists.txt): it compiles CLI11.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace handoff::config {

namespace bounds_detail {

// A bound as --help and a refusal show it: the shortest text that reads back as the same
// double ("0.05", "1073741824").
inline std::string shown(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// The text is read as the flag's own conversion reads it (strtod, strtoll) and compared as a
// double, so that a bound written 0.05 admits the text "0.05".
inline CLI::Validator make(double lo, double hi, bool integer) {
  const std::string expected =
      std::string(integer ? "an integer" : "a number") + " from " + shown(lo) + " to " + shown(hi);
  return CLI::Validator(
      [lo, hi, integer, expected](std::string& text) -> std::string {
        const char* begin = text.c_str();
        char* end = nullptr;
        errno = 0;
        double v = 0;
        bool ok = !text.empty() && text.find_first_of(" \t\n") == std::string::npos;
        if (ok && integer) {
          ok = text.find_first_not_of("+-0123456789") == std::string::npos;
          if (ok) v = static_cast<double>(std::strtoll(begin, &end, 10));
        } else if (ok) {
          v = std::strtod(begin, &end);
        }
        ok = ok && end == begin + text.size() && errno != ERANGE && std::isfinite(v) && v >= lo && v <= hi;
        return ok ? std::string() : "expected " + expected + ", got '" + text + "'";
      },
      (integer ? "INT in [" : "NUMBER in [") + shown(lo) + ", " + shown(hi) + "]");
}

}  // namespace bounds_detail

/// The text must be a whole number in [lo, hi].
inline CLI::Validator integer_in(double lo, double hi) { return bounds_detail::make(lo, hi, true); }

/// The text must be a finite number (a fraction allowed) in [lo, hi].
inline CLI::Validator number_in(double lo, double hi) { return bounds_detail::make(lo, hi, false); }

}  // namespace handoff::config
