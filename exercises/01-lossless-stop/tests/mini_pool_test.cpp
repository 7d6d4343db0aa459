// exercises/01-lossless-stop/tests: stop() must lose no job that was submitted before it.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "mini_pool.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;

TEST_CASE("mini pool: every job submitted before stop() runs", "[exercise][ch01]") {
  handoff::testkit::Watchdog dog(20s, "stop() with 100 queued jobs");
  std::atomic<int> ran{0};
  {
    exercise::MiniPool pool(2);
    for (int i = 0; i < 100; ++i) {
      pool.submit([&ran] {
        std::this_thread::sleep_for(1ms);
        ran.fetch_add(1);
      });
    }
    pool.stop();
  }
  CHECK(ran.load() == 100);
}

TEST_CASE("mini pool: stop() returns with every thread joined, even with nothing queued", "[exercise][ch01]") {
  handoff::testkit::Watchdog dog(10s, "stop() of an idle pool");
  exercise::MiniPool pool(4);
  pool.stop();
  pool.stop();  // idempotent
  SUCCEED("stop() returned twice");
}
