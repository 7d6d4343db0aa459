// exercises/02-try-pop/tests: single-thread semantics, then two producers and two consumers.
#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "testkit/watchdog.h"
#include "word_ring.h"

using exercise::WordRing;

TEST_CASE("word ring: an empty ring pops nothing", "[exercise][ch02]") {
  WordRing ring(4);
  std::uint64_t v = 99;
  CHECK_FALSE(ring.try_pop(v));
  CHECK(v == 99);
}

TEST_CASE("word ring: words come out in the order they went in, over many laps", "[exercise][ch02]") {
  WordRing ring(4);
  std::uint64_t next_in = 0, next_out = 0;
  for (int lap = 0; lap < 1000; ++lap) {
    while (ring.try_push(next_in)) ++next_in;  // fill
    std::uint64_t v;
    while (ring.try_pop(v)) REQUIRE(v == next_out++);  // drain
    REQUIRE(next_out == next_in);
  }
  CHECK(next_in == 4000);
}

TEST_CASE("word ring: a full ring takes a push again after a pop", "[exercise][ch02]") {
  WordRing ring(2);
  REQUIRE(ring.try_push(1));
  REQUIRE(ring.try_push(2));
  CHECK_FALSE(ring.try_push(3));
  std::uint64_t v;
  REQUIRE(ring.try_pop(v));
  CHECK(v == 1);
  CHECK(ring.try_push(3));
}

TEST_CASE("word ring: two producers and two consumers deliver every word exactly once", "[exercise][ch02]") {
  handoff::testkit::Watchdog dog(std::chrono::seconds(30), "2x2 word ring stress");
  constexpr std::uint64_t kPerProducer = 100'000;
  WordRing ring(64);
  std::vector<std::vector<std::uint64_t>> got(2);
  std::atomic<std::uint64_t> taken{0};
  std::atomic<bool> stalled{false};  // a producer found the ring full for 3 s on end
  std::vector<std::thread> threads;
  for (std::uint64_t p = 0; p < 2; ++p) {
    threads.emplace_back([&, p] {
      for (std::uint64_t i = 0; i < kPerProducer; ++i) {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (!ring.try_push(p * kPerProducer + i)) {
          if (std::chrono::steady_clock::now() > give_up) {
            stalled = true;
            return;
          }
          std::this_thread::yield();
        }
      }
    });
  }
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([&, c] {
      std::uint64_t v;
      while (taken.load() < 2 * kPerProducer && !stalled.load()) {
        if (ring.try_pop(v)) {
          got[static_cast<std::size_t>(c)].push_back(v);
          taken.fetch_add(1);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE_FALSE(stalled.load());
  std::vector<int> seen(2 * kPerProducer, 0);
  for (const auto& g : got) {
    for (auto v : g) {
      REQUIRE(v < seen.size());
      ++seen[v];
    }
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(seen.size()));
}
