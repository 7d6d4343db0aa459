// exercises/03-chained-wake/tests: the stolen credit, forced every time, must not leave a
// job behind a long one while a taker sleeps.
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "lane.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

/// Holds the first taker that reaches the hook it is called from, while armed, until the
/// test releases it (or 5 s pass).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false, arrived = false, released = false;
  void thread_side() {
    std::unique_lock lock(mu);
    if (!armed) return;
    armed = false;
    arrived = true;
    cv.notify_all();
    cv.wait_for(lock, 5s, [this] { return released; });
  }
  void arm() {
    std::lock_guard lock(mu);
    armed = true;
  }
  bool wait_arrival() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 2s, [this] { return arrived; });
  }
  void release() {
    std::lock_guard lock(mu);
    released = true;
    cv.notify_all();
  }
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 2s) {
  const auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50us);
  }
  return true;
}

/// At rest (every taker gone), one more look at the socket (a take that does not wait: its
/// poll_lane() takes any poke left there and gives its credit back), then the word must say
/// what a lane at rest is: nobody parked, no wake in flight. A poke sent without its credit
/// (a wake the word never counted) is given back by whoever takes it, and the counts fall
/// below zero.
void check_counts_at_rest(exercise::Lane& lane) {
  (void)lane.take(std::chrono::milliseconds(0));
  INFO("at rest the lane counts " << lane.parked() << " parked and " << lane.wakes_in_flight()
                                  << " wakes in flight, where both must be 0: a wake passed on without taking its "
                                     "credit (a poke that wake_one_if_parked did not count) was given back by the "
                                     "taker that read it, so the word no longer says who has a wake coming");
  CHECK(lane.parked() == 0);
  CHECK(lane.wakes_in_flight() == 0);
}

}  // namespace

TEST_CASE("lane: a poke eaten by an awake taker still reaches its parked sibling", "[exercise][ch03]") {
  handoff::testkit::Watchdog dog(20s, "the forced stolen credit");
  Gate before_block, after_wake;  // outlive the lane's takers: they call into them
  // relaxed (all): test flags polled in bounded loops.
  std::atomic<bool> slow_started{false}, fast_done{false}, fast_beside_slow{false};
  exercise::Lane lane({[&] { before_block.thread_side(); }, [&] { after_wake.thread_side(); }, {}});
  // Job 0 is slow: it holds its taker until job 1 is done, or 2 s. Job 1 is fast. Job -1
  // ends a taker. A taker waits up to 5 s in take(), so no timeout of its own can rescue a
  // sleeping taker inside the test's 1 s bound.
  auto taker = [&] {
    for (;;) {
      const auto job = lane.take(5s);
      if (!job) continue;
      if (*job == -1) return;
      if (*job == 0) {
        slow_started.store(true, std::memory_order_relaxed);
        fast_beside_slow.store(eventually([&] { return fast_done.load(std::memory_order_relaxed); }, 2s),
                               std::memory_order_relaxed);
      } else {
        fast_done.store(true, std::memory_order_relaxed);
      }
    }
  };
  before_block.arm();  // the first taker to park stops before it blocks: call it B
  std::thread t1(taker), t2(taker);
  REQUIRE(before_block.wait_arrival());
  REQUIRE(eventually([&] { return lane.parked() == 2; }));  // A too: blocked, or on its way
  std::this_thread::sleep_for(5ms);                         // A in poll()
  after_wake.arm();
  lane.submit(0);  // one poke: only A can read it
  REQUIRE(after_wake.wait_arrival());
  lane.submit(1);        // B still counts as parked: a poke for B, into the shared socket
  after_wake.release();  // A looks at the socket on its way back to the ring, and eats it
  REQUIRE(eventually([&] { return slow_started.load(std::memory_order_relaxed); }));
  before_block.release();  // B blocks: only a wake passed on can reach it now
  const bool fast = eventually([&] { return fast_done.load(std::memory_order_relaxed); }, 1s);
  const std::uint64_t eaten = lane.pokes_eaten(), chained = lane.chained_wakes();
  lane.submit(-1);  // the end: from here on a poke may be eaten by either taker
  lane.submit(-1);
  t1.join();
  t2.join();
  {
    INFO("the test forces one steal (taker A eats the poke sent for parked B), and A ate " << eaten
         << " pokes: did take() change, or the hooks?");
    CHECK(eaten == 1);
  }
  {
    INFO("A ate the poke sent for B, took the slow job, and the fast job waited in the ring while B slept: "
         "a taker that took a job and still sees work must pass one wake on (submit's rule: "
         "wake_one_if_parked) after the fence that follows the credit's return");
    CHECK(fast);                                              // job 1 ran within 1 s ...
    CHECK(fast_beside_slow.load(std::memory_order_relaxed));  // ... beside the slow job, not after it
  }
  {
    INFO("pass_wake_on passed " << chained << " wakes on for one stolen poke: one parked sibling needs one wake");
    CHECK(chained <= 1);
  }
  check_counts_at_rest(lane);
}

TEST_CASE("lane: a taker that eats a poke and takes the last job passes no wake on", "[exercise][ch03]") {
  handoff::testkit::Watchdog dog(10s, "no wake passed on for an empty ring");
  Gate before_block;
  exercise::Lane lane({[&] { before_block.thread_side(); }, {}, {}});
  before_block.arm();
  std::thread b([&] { (void)lane.take(300ms); });  // B: counted parked, held before it blocks
  REQUIRE(before_block.wait_arrival());
  lane.submit(7);                // a poke for B
  CHECK(lane.take(100ms) == 7);  // this thread eats it, and takes the only job
  CHECK(lane.pokes_eaten() == 1);
  {
    // B is parked with no wake coming, but there is no work for it.
    INFO("this taker ate B's poke and took the only job, and then passed a wake on ("
         << lane.chained_wakes() << " chained, " << lane.wakes_in_flight()
         << " in flight) though the ring was empty: B would wake for nothing, find the ring empty and park "
            "again, two system calls spent. Pass a wake on only while work is left");
    CHECK(lane.chained_wakes() == 0);
    CHECK(lane.wakes_in_flight() == 0);
  }
  before_block.release();
  b.join();  // B's own 300 ms limit ends its take
  check_counts_at_rest(lane);
}

TEST_CASE("lane: a taker passes no wake on to a sibling whose wake is already on its way", "[exercise][ch03]") {
  handoff::testkit::Watchdog dog(10s, "no second wake for one parked sibling");
  Gate after_take, before_block;
  exercise::Lane lane({[&] { before_block.thread_side(); }, {}, [&] { after_take.thread_side(); }});
  lane.submit(7);  // nobody parked: no poke
  after_take.arm();
  std::thread a([&] { (void)lane.take(300ms); });  // A: takes 7, held before it passes a wake on
  REQUIRE(after_take.wait_arrival());
  before_block.arm();
  std::thread b([&] { (void)lane.take(2s); });  // B: finds the ring empty, counted parked, held
  REQUIRE(before_block.wait_arrival());
  lane.submit(8);  // a poke for B: parked 1, one wake in flight
  const int parked = lane.parked(), in_flight = lane.wakes_in_flight();
  after_take.release();  // A sees 8 in the ring, and B parked, with B's wake on its way
  a.join();
  const std::uint64_t chained = lane.chained_wakes();
  const int in_flight_after = lane.wakes_in_flight(), parked_after = lane.parked();
  before_block.release();
  b.join();  // B reads its poke and takes 8
  CHECK(parked == 1);
  CHECK(in_flight == 1);
  {
    INFO("A took a job with work left and B parked, but B's wake was already on its way (1 parked, 1 in "
         "flight), and A passed another on ("
         << chained << " chained; then " << in_flight_after << " in flight for " << parked_after
         << " parked): a poke is a credit for one parked thread, so pass one on only while the parked outnumber "
            "the wakes in flight (submit's rule, wake_one_if_parked)");
    CHECK(chained == 0);                     // one wake for one parked sibling, not two
    CHECK(in_flight_after <= parked_after);  // a poke is a credit for one parked thread
  }
  check_counts_at_rest(lane);
}

TEST_CASE("lane: two takers and a thousand jobs lose none", "[exercise][ch03]") {
  handoff::testkit::Watchdog dog(30s, "1000 jobs over two takers");
  exercise::Lane lane;
  std::atomic<int> taken{0};  // relaxed: a count, read after the joins
  std::atomic<bool> stop{false};
  auto taker = [&] {
    while (!stop.load(std::memory_order_relaxed)) {
      if (lane.take(100ms)) taken.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread t1(taker), t2(taker);
  for (int i = 0; i < 1000; ++i) {
    lane.submit(i);
    if (i % 50 == 0) std::this_thread::sleep_for(1ms);  // let them park now and then
  }
  {
    const bool all = eventually([&] { return taken.load(std::memory_order_relaxed) == 1000; }, 10s);
    INFO("of 1000 jobs, " << taken.load(std::memory_order_relaxed)
                          << " were taken within 10 s while two takers ran: a job was left behind a sleeping taker");
    CHECK(all);
  }
  stop.store(true, std::memory_order_relaxed);
  t1.join();
  t2.join();
  CHECK(taken.load() == 1000);
  check_counts_at_rest(lane);
}
