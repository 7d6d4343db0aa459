// pool/tests/completion_ring_test: the loop's flag under stress: 100k wakes ping-ponged
// against a loop that parks with no deadline, through the fenced ring, with a no-progress
// bound that turns a lost wake into a failure (chapter 03, seed 003's shape). Bounded twice:
// the 5 s no-progress bound ends a stalled run, and a watchdog ends a run that does not end.
#include <catch2/catch.hpp>
#include <chrono>

#include "pool/completion_ring.h"
#include "testkit/loop_wake_pingpong.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace std::chrono_literals;

TEST_CASE("completion ring: 100k wakes against a loop parked with no deadline lose none", "[pool][ch03]") {
  testkit::Watchdog dog(50s, "100k loop wakes through the fenced completion ring");
  pool::CompletionRing ring(1024);  // the production ring: both fences in place
  const testkit::PingPongResult r = testkit::loop_wake_pingpong(ring, 100'000, 5s);
  INFO("stalled at wake " << r.stall_at << "; loop waits " << r.loop_waits << ", re-check catches " << r.recheck_catches
                          << ", pokes " << r.pokes << ", " << r.wall_s << " s");
  CHECK_FALSE(r.stalled);
  CHECK(r.wakes == 100'000);
  // The run tested the park: most wakes found the loop blocked (or about to block) and
  // needed a poke. A run in which the loop never parked would show nothing about the flag.
  CHECK(r.loop_waits > 0);
  CHECK(r.pokes > 0);
}
