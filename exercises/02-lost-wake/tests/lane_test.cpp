// exercises/02-lost-wake/tests: a push inside the park window must not be slept through.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <future>
#include <mutex>

#include "lane.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;

namespace {
/// Stops the taker between the two steps of its park, once, until the test lets it go.
struct Window {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = true, inside = false, go = false;
  void hold() {
    std::unique_lock lock(mu);
    if (!armed) return;
    armed = false;
    inside = true;
    cv.notify_all();
    cv.wait_for(lock, 5s, [this] { return go; });
  }
};
}  // namespace

TEST_CASE("lane: a job submitted while the taker is between its park steps is taken", "[exercise][ch02]") {
  handoff::testkit::Watchdog dog(20s, "a push inside the park window");
  Window w;
  exercise::Lane lane([&w] { w.hold(); });
  auto taker = std::async(std::launch::async, [&lane] { return lane.take(1500ms); });
  {
    std::unique_lock lock(w.mu);
    if (!w.cv.wait_for(lock, 5s, [&w] { return w.inside; })) {
      FAIL("the park never called between_steps_() (the test's hook): call it between its two steps");
    }
  }
  lane.submit(42);  // exactly inside the window
  {
    std::lock_guard lock(w.mu);
    w.go = true;
  }
  w.cv.notify_all();
  const auto job = taker.get();  // bounded by take's own 1.5 s limit
  REQUIRE(job.has_value());
  CHECK(*job == 42);
}

TEST_CASE("lane: a thousand park-and-wake rounds lose nothing", "[exercise][ch02]") {
  handoff::testkit::Watchdog dog(30s, "1000 park/wake rounds");
  exercise::Lane lane;
  int lost = 0;
  for (int i = 0; i < 1000; ++i) {
    auto taker = std::async(std::launch::async, [&lane] { return lane.take(1000ms); });
    lane.submit(i);
    const auto job = taker.get();
    if (!job || *job != i) ++lost;
  }
  CHECK(lost == 0);
}
