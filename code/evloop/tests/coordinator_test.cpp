// evloop/tests/coordinator_test: the coordinator hand-in: the marks it carries, order
// through it, stop and restart, destruction with posts in flight, and its two wakes per
// post against the direct arm's one (chapter 04).
// Role: each claim of evloop/coordinator.h as a test, on the Coordinator alone where a hook
// makes it deterministic and on an EventLoop with HandIn::coordinator otherwise.
#include "evloop/coordinator.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "evloop/event_loop.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using handoff::evloop::Coordinator;
using handoff::evloop::EventLoop;
using handoff::evloop::EventLoopOptions;
using handoff::evloop::HandIn;
using handoff::evloop::HandlePtr;
using handoff::evloop::HandleState;
using handoff::evloop::Post;
using handoff::evloop::PostQueue;
using handoff::evloop::ReadyQueue;
using handoff::evloop::TurnShape;
using handoff::testkit::Watchdog;

namespace {

EventLoopOptions arm(HandIn h, TurnShape t = TurnShape::generation) {
  EventLoopOptions o;
  o.hand_in = h;
  o.turn = t;
  return o;
}

/// Spin (bounded) until `pred`; false at the deadline.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

TEST_CASE("coordinator: a post carries the mark read when it was submitted, not when it was forwarded",
          "[evloop][ch04]") {
  Watchdog dog(10s, "marks through the coordinator");
  ReadyQueue ready;
  PostQueue loop_posts;
  handoff::reactor::WakeFlag loop_wake;
  std::atomic<bool> release{false};
  {
    // The hook holds every forward until the loop thread (here: this one) has moved on.
    Coordinator coord(loop_posts, loop_wake, [&] {
      // acquire: pairs with the release below; the test's pushes are done.
      eventually([&] { return release.load(std::memory_order_acquire); }, 5s);
    });
    coord.submit(HandlePtr::make(nullptr, HandleState::Holders::any_thread), ready);  // mark 0
    for (int i = 0; i < 3; ++i) ready.push_local(HandlePtr::make(nullptr));
    coord.submit(HandlePtr::make(nullptr, HandleState::Holders::any_thread), ready);  // mark 3
    // Local count 7 when the hook lets the forward go.
    for (int i = 0; i < 4; ++i) ready.push_local(HandlePtr::make(nullptr));
    release.store(true, std::memory_order_release);  // release: pairs with the hook's acquire
    REQUIRE(eventually([&] { return coord.forwarded() == 2; }, 5s));
  }
  std::vector<Post> got;
  loop_posts.take(got);
  REQUIRE(got.size() == 2);
  CHECK(got[0].mark == 0);
  CHECK(got[1].mark == 3);  // a mark read by the coordinator would say 7
}

TEST_CASE("coordinator: call_soon and call_soon_threadsafe interleave in scheduling order through it",
          "[evloop][ch04]") {
  Watchdog dog(20s, "local and posted order through the coordinator");
  for (auto t : {TurnShape::generation, TurnShape::drain}) {
    EventLoop loop(arm(HandIn::coordinator, t));
    std::vector<std::string> ran;
    loop.call_soon([&] {
      std::thread helper([&] {
        for (int i = 0; i < 25; ++i) loop.call_soon_threadsafe([&ran, i] { ran.push_back("t" + std::to_string(i)); });
      });
      helper.join();  // the helper's 25 posts, all marked 1 (this callback's count): before l0
      for (int i = 0; i < 25; ++i) {
        loop.call_soon([&ran, i] { ran.push_back("l" + std::to_string(i)); });
        loop.call_soon_threadsafe([&ran, i] { ran.push_back("s" + std::to_string(i)); });
      }
      // The coordinator hands the posts in while this callback runs; wait (bounded) until it
      // has, so the order tested is the marks', not the hop's timing (coordinator.h).
      REQUIRE(eventually([&] { return loop.coordinator()->forwarded() == 50; }, 5s));
      loop.call_soon([&] { loop.stop(); });
    });
    loop.run_forever();
    std::vector<std::string> want;
    for (int i = 0; i < 25; ++i) want.push_back("t" + std::to_string(i));
    for (int i = 0; i < 25; ++i) {
      want.push_back("l" + std::to_string(i));
      want.push_back("s" + std::to_string(i));
    }
    CHECK(ran == want);
  }
}

TEST_CASE("coordinator: 4 producers' posts through it keep each producer's order", "[evloop][ch04]") {
  Watchdog dog(40s, "4 producers x 5k posts through the coordinator");
  constexpr int kThreads = 4, kEach = 5'000;
  EventLoop loop(arm(HandIn::coordinator));
  std::vector<int> next(kThreads, 0);
  long out_of_order = 0, total = 0;
  std::vector<std::thread> producers;
  for (int p = 0; p < kThreads; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        loop.call_soon_threadsafe([&, p, i] {
          if (next[static_cast<std::size_t>(p)] != i) ++out_of_order;
          next[static_cast<std::size_t>(p)] = i + 1;
          ++total;
        });
      }
    });
  }
  loop.run_until([&] { return total == kThreads * kEach; });  // a lost wake on either hop hangs here
  for (auto& t : producers) t.join();
  CHECK(out_of_order == 0);
  CHECK(total == kThreads * kEach);
  CHECK(loop.coordinator()->forwarded() == static_cast<std::uint64_t>(kThreads * kEach));
}

TEST_CASE("coordinator: a producer's order holds across stops and restarts, and posts between runs go first",
          "[evloop][ch04]") {
  Watchdog dog(30s, "stop and restart through the coordinator");
  SECTION("a post made between runs runs ahead of the next run's own callbacks") {
    EventLoop loop(arm(HandIn::coordinator));
    std::vector<int> ran;
    loop.call_soon([&] { ran.push_back(0); });
    std::thread([&] { loop.call_soon_threadsafe([&] { ran.push_back(1); }); }).join();
    loop.call_soon([&] { ran.push_back(2); });
    REQUIRE(eventually([&] { return loop.coordinator()->forwarded() == 1; }, 5s));
    loop.call_soon([&] { loop.stop(); });
    loop.run_forever();
    CHECK(ran == std::vector<int>{0, 1, 2});
  }
  SECTION("a producer posting through runs that its own callbacks stop mid-stream") {
    constexpr int kPosts = 20'000;
    EventLoop loop(arm(HandIn::coordinator));
    std::vector<int> seen;
    seen.reserve(kPosts);
    std::atomic<int> ran{0};
    std::thread producer([&] {
      for (int i = 0; i < kPosts; ++i) {
        loop.call_soon_threadsafe([&, i] {
          seen.push_back(i);
          ran.fetch_add(1, std::memory_order_release);  // release: pairs with the producer's acquire
          // A stop from inside a turn: what the turn had ready still runs, the rest waits.
          if (i % 1000 == 0 || i == kPosts - 1) loop.stop();
        });
        // Paced so that posts 0, 1000, 2000, ... stop different runs, with up to 1500 in
        // flight (inbox, loop queue, ready queue) across each stop and restart.
        if (i % 1000 == 999) {
          // acquire: pairs with the callbacks' release.
          eventually([&] { return ran.load(std::memory_order_acquire) >= i - 499; }, 10s);
        }
      }
    });
    int runs = 0;
    while (seen.size() < static_cast<std::size_t>(kPosts)) {
      loop.call_soon([] {});  // a local callback per run: later posts carry later marks
      loop.run_forever();
      ++runs;
    }
    producer.join();
    INFO("runs " << runs);
    long out_of_order = 0;
    for (int i = 0; i < kPosts; ++i) out_of_order += seen[static_cast<std::size_t>(i)] != i;
    CHECK(out_of_order == 0);
    CHECK(runs >= 20);
  }
}

// The loop runs while the producers post, so posts do run (the count the destruction must
// not move is not zero by construction); it is then destroyed with posts still in the
// loop's queue (1,000 forwarded) and likely in the coordinator's inbox, and must run none.
// Shown failing by a destructor that drains what is queued (a run_once(0) in ~EventLoop):
// the count moves by the forwarded 1,000.
TEST_CASE("coordinator: a loop destroyed with posts in flight releases them without running them or hanging",
          "[evloop][ch04]") {
  Watchdog dog(20s, "destruction with posts in flight");
  auto token = std::make_shared<int>(0);  // every post's capture holds a copy
  std::atomic<int> ran{0};
  std::uint64_t forwarded = 0;
  int ran_by_the_loop = 0;
  bool all_forwarded = false;
  {
    EventLoop loop(arm(HandIn::coordinator));
    std::vector<std::thread> producers;
    for (int p = 0; p < 2; ++p) {
      producers.emplace_back([&] {
        for (int i = 0; i < 5'000; ++i) {
          loop.call_soon_threadsafe([token, &ran] {
            ran.fetch_add(1, std::memory_order_relaxed);  // relaxed: the loop's own thread reads it
          });
        }
      });
    }
    // relaxed: the callbacks run on this thread.
    loop.run_until([&ran] { return ran.load(std::memory_order_relaxed) >= 100; });
    for (auto& t : producers) t.join();
    ran_by_the_loop = ran.load(std::memory_order_relaxed);
    // Then posts surely in flight (the loop never turns again): 1,000 that the coordinator
    // has forwarded into the loop's queue, and 1,000 it is likely still forwarding.
    const auto post_more = [&] {
      for (int i = 0; i < 1'000; ++i) {
        loop.call_soon_threadsafe([token, &ran] { ran.fetch_add(1, std::memory_order_relaxed); });
      }
    };
    post_more();
    all_forwarded = eventually([&] { return loop.coordinator()->forwarded() == 11'000; }, 10s);
    post_more();
    forwarded = loop.coordinator()->forwarded();
  }
  std::printf("destroyed with %llu of 12000 posts forwarded, %d run by the loop\n",
              static_cast<unsigned long long>(forwarded), ran_by_the_loop);
  CHECK(all_forwarded);
  CHECK(ran_by_the_loop >= 100);
  CHECK(ran.load(std::memory_order_relaxed) == ran_by_the_loop);  // relaxed: the loop's threads are joined
  CHECK(token.use_count() == 1);                                  // every handle released: none leaked
}

namespace {

struct WakeCounts {
  std::uint64_t loop_pokes;   // pokes the loop read off its socket
  std::uint64_t coord_wakes;  // pokes that woke the coordinator (0 on direct)
};

/// `rounds` ping-pongs: a post, then the producer waits until its callback ran and lets
/// both threads park (200 µs) before the next post.
WakeCounts ping_pong(HandIn h, int rounds) {
  EventLoop loop(arm(h));
  std::atomic<int> done{0};
  std::thread producer([&] {
    for (int i = 0; i < rounds; ++i) {
      loop.call_soon_threadsafe([&done] {
        done.fetch_add(1, std::memory_order_release);  // release: pairs with the producer's acquire
      });
      // acquire: pairs with the release above; the next post follows this callback.
      while (done.load(std::memory_order_acquire) <= i) std::this_thread::yield();
      std::this_thread::sleep_for(200us);
    }
  });
  // relaxed: the loop thread's own counter read back; run_until returns once all ran.
  loop.run_until([&] { return done.load(std::memory_order_relaxed) == rounds; });
  producer.join();
  return {loop.counts().pokes_taken, loop.coordinator() ? loop.coordinator()->wakes() : 0};
}

}  // namespace

TEST_CASE("coordinator: a post to a parked loop costs two wakes through the coordinator, one direct",
          "[evloop][ch04]") {
  Watchdog dog(30s, "wakes per post, both arms");
  constexpr int kRounds = 1'000;
  const WakeCounts direct = ping_pong(HandIn::direct, kRounds);
  const WakeCounts coord = ping_pong(HandIn::coordinator, kRounds);
  const double direct_per = static_cast<double>(direct.loop_pokes + direct.coord_wakes) / kRounds;
  const double coord_per = static_cast<double>(coord.loop_pokes + coord.coord_wakes) / kRounds;
  std::printf("wakes per post: direct %.3f (loop %llu), coordinator %.3f (coordinator %llu, loop %llu)\n", direct_per,
              static_cast<unsigned long long>(direct.loop_pokes), coord_per,
              static_cast<unsigned long long>(coord.coord_wakes), static_cast<unsigned long long>(coord.loop_pokes));
  INFO("direct " << direct_per << ", coordinator " << coord_per);
  // At most one poke per post and per hop (WakeFlag's exchange); the pauses let most find
  // their sleeper parked. A coordinator bypassed would send none of its own.
  CHECK(direct.coord_wakes == 0);
  CHECK(direct_per <= 1.0);
  CHECK(direct_per > 0.5);
  CHECK(coord_per <= 2.0);
  CHECK(coord_per > 1.5);
  CHECK(coord.coord_wakes > kRounds / 2);
}
