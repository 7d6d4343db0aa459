// sync/tests/spin_backoff_test: the idle spinner's backoff, step by step: a miss skips the
// next spin, misses in a row double the skips up to the cap, and one catch ends the backoff
// (chapter 04). Single-threaded: the class is one role holder's bookkeeping.
#include <catch2/catch.hpp>

#include <cstdint>

#include "sync/spin_backoff.h"

using handoff::sync::SpinBackoff;

namespace {

/// How many idle periods in a row skip their spin from here, up to `limit`.
int skips_in_a_row(SpinBackoff& b, int limit = 1000) {
  int n = 0;
  while (n < limit && b.skip()) ++n;
  return n;
}

}  // namespace

TEST_CASE("spin backoff: it never skips a spin until one has missed", "[sync][ch04]") {
  SpinBackoff b;
  CHECK(skips_in_a_row(b) == 0);
  b.record(true);
  CHECK(skips_in_a_row(b) == 0);
}

TEST_CASE("spin backoff: misses in a row skip 1, 3, 7 ... spins, up to 63", "[sync][ch04]") {
  SpinBackoff b;
  for (std::uint32_t m = 1; m <= SpinBackoff::kMaxMissLog2 + 2; ++m) {
    b.record(false);
    const std::uint32_t capped = m < SpinBackoff::kMaxMissLog2 ? m : SpinBackoff::kMaxMissLog2;
    CHECK(skips_in_a_row(b) == static_cast<int>((1u << capped) - 1));  // then the next one spins
  }
  CHECK(b.skipped() == 1 + 3 + 7 + 15 + 31 + 63 + 63 + 63);
}

TEST_CASE("spin backoff: one catch ends the backoff, and the next miss starts it over", "[sync][ch04]") {
  SpinBackoff b;
  for (int i = 0; i < 4; ++i) {
    b.record(false);
    skips_in_a_row(b);
  }
  b.record(true);
  CHECK(skips_in_a_row(b) == 0);
  b.record(false);
  CHECK(skips_in_a_row(b) == 1);
}
