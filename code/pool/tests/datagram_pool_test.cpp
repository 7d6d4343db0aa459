// pool/tests/datagram_pool_test: the chapter 01 hand-off, driven by a real reactor on the
// test thread (which plays the loop), bounded by a watchdog.
#include <catch2/catch.hpp>

#include "pool/datagram_pool.h"
#include "pool/ring_pool.h"
#include "pool_rig.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace handoff::pool::testing;

// The contract every pool keeps, run against chapter 01's and chapter 02's.
TEMPLATE_TEST_CASE("pool: every job completes exactly once, its frames in order", "[pool][ch01][ch02]",
                   pool::DatagramPool, pool::RingPool) {
  testkit::Watchdog dog(20s, "1000 streamed jobs through 3 threads");
  Rig<TestType> rig(3);
  constexpr std::uint64_t kJobs = 1000;
  for (std::uint64_t i = 0; i < kJobs; ++i) rig.pool.submit(make_job(i, kStream));
  REQUIRE(rig.run_until(kJobs));
  rig.pool.stop();
  REQUIRE(rig.sink.kinds.size() == kJobs);
  using K = pool::Frame::Kind;
  const std::vector<K> expected{K::stream_head, K::chunk, K::chunk, K::chunk, K::end};
  for (std::uint64_t i = 0; i < kJobs; ++i) {
    INFO("job " << i);
    const std::string t = "/job" + std::to_string(i);
    CHECK(rig.sink.kinds[i] == expected);
    CHECK(rig.sink.bodies[i] == t + "#0;" + t + "#1;" + t + "#2;");
  }
  CHECK(rig.sink.ends == kJobs);
}

TEMPLATE_TEST_CASE("pool: stop with jobs in flight loses none, and the pills stop every thread", "[pool][ch01][ch02]",
                   pool::DatagramPool, pool::RingPool) {
  testkit::Watchdog dog(20s, "stop() with 200 slow jobs queued");
  Rig<TestType> rig(4);
  for (std::uint64_t i = 0; i < 200; ++i) rig.pool.submit(make_job(i, kSlow));
  rig.pool.stop();  // returns only when every thread has taken its pill and been joined
  CHECK(rig.sink.ends == 200);
  CHECK(rig.pool_counter(stats::Counter::requests) == 200);
}

TEST_CASE("datagram pool: a full lane backs up in the loop and drains, no job lost", "[pool][ch01]") {
  testkit::Watchdog dog(20s, "a burst far larger than the lane's queue");
  Rig<pool::DatagramPool> rig(1);
  // The lane's send buffer holds a few hundred 8-byte datagrams; 3000 at once, while the
  // loop is not draining, must overflow into the backlog.
  for (std::uint64_t i = 0; i < 3000; ++i) rig.pool.submit(make_job(i, kStream));
  REQUIRE(rig.run_until(3000));
  CHECK(rig.loop_stats.get(stats::Counter::handoff_eagain) > 0);
  rig.pool.stop();
  CHECK(rig.sink.kinds.size() == 3000);
}

TEST_CASE("datagram pool: every crossing is a syscall on both sides", "[pool][ch01]") {
  testkit::Watchdog dog(20s, "100 whole-response jobs");
  Rig<pool::DatagramPool> rig(1);
  for (std::uint64_t i = 0; i < 100; ++i) {
    rig.pool.submit(make_job(i, kWhole));
    REQUIRE(rig.run_until(i + 1));  // one at a time: nothing is batched
  }
  rig.pool.stop();
  CHECK(rig.loop_stats.get(stats::Counter::handoff_sends) >= 100);  // one send per job
  CHECK(rig.loop_stats.get(stats::Counter::handoff_recvs) >= 200);  // the frame, then EAGAIN
  CHECK(rig.pool_counter(stats::Counter::handoff_sends) >= 100);    // one send per frame
}
