// stack/tests/packet_pool_test: the lock-free packet-buffer pool (chapter 05): the ABA
// interleaving forced by a hook (a taker stopped between reading the top's link and its CAS
// while the top is taken, its link taken and the top given back), which the tagged head
// survives and the untagged control does not; a take/give-back stress with an owner check;
// and a refill from the reserve once the free pool is empty. Bounded by watchdogs.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "stack/packet_pool.h"
#include "testkit/watchdog.h"

using handoff::stack::PacketPoolHooks;
using handoff::stack::PacketPoolOptions;
using handoff::stack::PacketPoolPoint;
using handoff::stack::PacketPoolSeams;
using handoff::testkit::Watchdog;
using namespace std::chrono_literals;

namespace {

using Pool = handoff::stack::PacketPool<>;

/// Stops the first take that reaches the point until the test lets it go.
class PauseFirstTake : public PacketPoolHooks {
 public:
  void at(PacketPoolPoint) noexcept override {
    if (paused_once_.exchange(true)) return;
    reached.store(true);
    while (!go.load()) std::this_thread::yield();
  }
  std::atomic<bool> reached{false};
  std::atomic<bool> go{false};

 private:
  std::atomic<bool> paused_once_{false};
};

}  // namespace

TEST_CASE("packet pool: a take stopped across take-take-give_back hands out no buffer twice with the tag, and does without it",
          "[stack][ch05]") {
  const bool tagged = GENERATE(true, false);
  INFO((tagged ? "tagged head" : "untagged head (the control)"));
  Watchdog dog(10s, "packet pool ABA");
  PauseFirstTake hooks;
  PacketPoolOptions o;
  o.packets = 4;
  o.free_pool = 4;
  PacketPoolSeams seams;
  seams.aba_tag = tagged;
  seams.hooks = &hooks;
  Pool pool(o, seams);

  std::int32_t a_took = Pool::kNone;
  std::thread a([&] { a_took = pool.try_take(); });  // reads top 0 and its link 1, then stops
  while (!hooks.reached.load()) std::this_thread::yield();
  const std::int32_t first = pool.try_take();   // 0
  const std::int32_t second = pool.try_take();  // 1, the link the stopped taker holds
  REQUIRE(first == 0);
  REQUIRE(second == 1);
  pool.give_back(static_cast<std::uint32_t>(first));  // 0 is the top again, its link now 2
  hooks.go.store(true);
  a.join();

  std::multiset<std::int32_t> held{a_took, second};
  for (;;) {
    const std::int32_t b = pool.try_take();
    if (b == Pool::kNone) break;
    held.insert(b);
    if (held.size() > 8) break;  // the broken pool may cycle; enough to see a duplicate
  }
  bool duplicate = false;
  for (auto b : held) duplicate |= held.count(b) > 1;
  CHECK(a_took == 0);
  if (tagged) {
    CHECK_FALSE(duplicate);
    CHECK(held == std::multiset<std::int32_t>{0, 1, 2, 3});
  } else {
    CHECK(duplicate);  // buffer 1 handed out while its first taker still holds it
  }
}

TEST_CASE("packet pool: under a take/give-back stress no buffer has two holders", "[stack][ch05]") {
  Watchdog dog(20s, "packet pool stress");
  PacketPoolOptions o;
  o.packets = 8;
  o.free_pool = 8;
  Pool pool(o);
  std::vector<std::atomic<int>> owner(8);
  for (auto& x : owner) x.store(-1);
  std::atomic<bool> doubled{false};
  std::atomic<std::uint64_t> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100'000; ++i) {
        const std::int32_t b = pool.try_take();
        if (b == Pool::kNone) continue;
        if (owner[b].exchange(t) != -1) doubled.store(true);
        pool.data(static_cast<std::uint32_t>(b))[0] = std::byte{static_cast<unsigned char>(t)};
        owner[b].store(-1);
        pool.give_back(static_cast<std::uint32_t>(b));
        taken.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK_FALSE(doubled.load());
  CHECK(taken.load() > 0);
  std::set<std::int32_t> left;
  for (std::int32_t b; (b = pool.try_take()) != Pool::kNone;) CHECK(left.insert(b).second);
  CHECK(left.size() == 8);  // every buffer came back exactly once
}

TEST_CASE("packet pool: once the free pool is empty a refill moves a batch from the reserve", "[stack][ch05]") {
  PacketPoolOptions o;
  o.packets = 8;
  o.free_pool = 2;
  o.refill_batch = 4;
  Pool pool(o);
  CHECK(pool.reserve_locked() == 6);
  const auto b0 = pool.try_take();
  const auto b1 = pool.try_take();
  CHECK(b0 != Pool::kNone);
  CHECK(b1 != Pool::kNone);
  CHECK(pool.try_take() == Pool::kNone);
  pool.release_locked(static_cast<std::uint32_t>(b0));
  pool.release_locked(static_cast<std::uint32_t>(b1));
  CHECK(pool.refill_locked() == 4);
  CHECK(pool.reserve_locked() == 4);
  for (int i = 0; i < 4; ++i) CHECK(pool.try_take() != Pool::kNone);
  CHECK(pool.try_take() == Pool::kNone);
  const auto c = pool.counters();
  CHECK(c.takes == 6);
  CHECK(c.take_empty == 2);
  CHECK(c.refills == 1);
  CHECK(c.refilled == 4);
}
