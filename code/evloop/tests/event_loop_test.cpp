// evloop/tests/event_loop_test: the callback loop's order, timers, stop, turn shapes and
// thread-safe wake (chapter 04).
// Role: each guarantee of evloop/event_loop.h as a test; the turn shapes' difference as a
// measured count; the wake's broken order as a negative control that must sleep through.
#include "evloop/event_loop.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "net/socket_pair.h"
#include "testkit/forked_child.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using handoff::evloop::EventLoop;
using handoff::evloop::EventLoopOptions;
using handoff::evloop::EventLoopSeams;
using handoff::evloop::Handle;
using handoff::evloop::HandlePtr;
using handoff::evloop::HandleState;
using handoff::evloop::TimerHeap;
using handoff::evloop::TurnShape;
using handoff::testkit::Watchdog;

namespace {

EventLoopOptions shape(TurnShape t) {
  EventLoopOptions o;
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

TEST_CASE("event loop: call_soon callbacks run in the order they were scheduled", "[evloop][ch04]") {
  Watchdog dog(10s, "call_soon FIFO");
  for (auto t : {TurnShape::generation, TurnShape::drain}) {
    EventLoop loop(shape(t));
    std::vector<int> ran;
    for (int i = 0; i < 200; ++i) loop.call_soon([&ran, i] { ran.push_back(i); });
    loop.call_soon([&] { loop.stop(); });
    loop.run_forever();
    REQUIRE(ran.size() == 200);
    for (int i = 0; i < 200; ++i) CHECK(ran[static_cast<std::size_t>(i)] == i);
  }
}

TEST_CASE("event loop: a handle cancelled before its turn never runs", "[evloop][ch04]") {
  Watchdog dog(10s, "cancel before run");
  EventLoop loop;
  std::vector<int> ran;
  loop.call_soon([&] { ran.push_back(1); });
  Handle h = loop.call_soon([&] { ran.push_back(2); });
  loop.call_soon([&] { ran.push_back(3); });
  h.cancel();
  // Cancelled from inside the same turn, before it runs, also holds.
  Handle later;
  loop.call_soon([&] { later.cancel(); });
  later = loop.call_soon([&] { ran.push_back(4); });
  loop.call_soon([&] { loop.stop(); });
  loop.run_forever();
  CHECK(ran == std::vector<int>{1, 3});
  CHECK(h.cancelled());
}

TEST_CASE("event loop: timers run in deadline order, equal deadlines in scheduling order", "[evloop][ch04]") {
  Watchdog dog(10s, "timer order");
  EventLoop loop;
  std::vector<int> ran;
  const auto t0 = EventLoop::Clock::now() + 20ms;
  loop.call_at(t0 + 30ms, [&] { ran.push_back(3); });
  loop.call_at(t0 + 10ms, [&] { ran.push_back(1); });
  loop.call_at(t0 + 20ms, [&] { ran.push_back(2); });
  loop.call_at(t0 + 20ms, [&] { ran.push_back(22); });
  loop.call_at(t0, [&] { ran.push_back(0); });
  loop.call_at(t0 + 40ms, [&] { loop.stop(); });
  loop.run_forever();
  CHECK(ran == std::vector<int>{0, 1, 2, 22, 3});
}

TEST_CASE("event loop: call_later measures from the loop's time, read once per turn, unless asked per call",
          "[evloop][ch04]") {
  Watchdog dog(10s, "loop time");
  // In one callback: A 20 ms out, then 15 ms of work, then B 10 ms out. Measured from the
  // turn's one clock read (per_turn), B is due 10 ms after the read and runs first; read
  // per call, or after update_time(), B is due 25 ms after it and runs second.
  const auto order = [](handoff::evloop::TimerClock clock, bool update) {
    EventLoopOptions o;
    o.timer_clock = clock;
    EventLoop loop(o);
    std::vector<char> ran;
    bool same_time = false;
    loop.call_soon([&] {
      const auto t = loop.time();
      loop.call_later(20ms, [&] { ran.push_back('A'); });
      const auto until = std::chrono::steady_clock::now() + 15ms;
      while (std::chrono::steady_clock::now() < until) {
      }
      same_time = loop.time() == t;
      if (update) loop.update_time();
      loop.call_later(10ms, [&] { ran.push_back('B'); });
      loop.call_later(100ms, [&] { loop.stop(); });
    });
    loop.run_forever();
    CHECK(same_time == (clock == handoff::evloop::TimerClock::per_turn));
    return std::string(ran.begin(), ran.end());
  };
  CHECK(order(handoff::evloop::TimerClock::per_turn, false) == "BA");
  CHECK(order(handoff::evloop::TimerClock::per_turn, true) == "AB");
  CHECK(order(handoff::evloop::TimerClock::per_call, false) == "AB");

  // Outside a run, and in the next turn, the loop's time is the clock's again.
  EventLoop loop;
  const auto before = EventLoop::Clock::now();
  CHECK(loop.time() >= before);
  EventLoop::Clock::time_point first{}, second{};
  loop.call_soon([&] {
    first = loop.time();
    loop.call_later(5ms, [&] {
      second = loop.time();
      loop.stop();
    });
  });
  loop.run_forever();
  CHECK(second - first >= 5ms);
  const auto after = EventLoop::Clock::now();
  CHECK(loop.time() >= after);
}

TEST_CASE("event loop: a timer set by a handler the poll dispatched measures from after the wait", "[evloop][ch04]") {
  Watchdog dog(10s, "loop time after a wait");
  // The loop reads its time in a turn (a timer is held), then waits 50 ms for a socket;
  // the reactor handler that readiness runs sets a 20 ms timer, which must not count the
  // wait (it would be due at once).
  EventLoop loop;
  auto [a, b] = handoff::net::datagram_pair();
  struct Reader final : handoff::reactor::IoHandler {
    EventLoop& loop;
    int fd;
    std::chrono::steady_clock::time_point set{}, fired{};
    Reader(EventLoop& l, int f) : loop(l), fd(f) {}
    void on_io(std::uint32_t) override {
      char c;
      (void)::recv(fd, &c, 1, 0);
      set = std::chrono::steady_clock::now();
      loop.call_later(20ms, [this] {
        fired = std::chrono::steady_clock::now();
        loop.stop();
      });
    }
  } reader(loop, a.get());
  loop.reactor().add(a.get(), EPOLLIN, &reader);
  loop.call_later(10s, [] {});  // a timer held: each turn reads the clock after its poll
  loop.call_soon([] {});
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    const char c = 'x';
    (void)::send(b.get(), &c, 1, 0);
  });
  loop.run_forever();
  writer.join();
  loop.reactor().remove(a.get(), &reader);
  CHECK(reader.fired - reader.set >= 20ms);
}

TEST_CASE("event loop: a cancelled timer causes no wake-up", "[evloop][ch04]") {
  Watchdog dog(10s, "cancelled timer");
  EventLoop loop;
  bool fired = false;
  Handle early = loop.call_later(30ms, [&] { fired = true; });
  loop.call_later(150ms, [&] { loop.stop(); });
  early.cancel();
  loop.run_forever();
  CHECK_FALSE(fired);
  // One blocking wait, to the live timer, which timed out once: the cancelled one at 30 ms
  // set no timeout. (Without the lazy drop at the top, the loop would wait twice.)
  CHECK(loop.counts().blocking_waits == 1);
  CHECK(loop.counts().wait_timeouts == 1);
  CHECK(loop.timers_held() == 0);
}

TEST_CASE("event loop: cancelled timers are compacted at the cancel that makes them outnumber the live ones",
          "[evloop][ch04]") {
  Watchdog dog(10s, "timer compaction at the cancel");
  EventLoop loop;
  std::vector<Handle> hs;
  // Deadlines in pushing order: the last stays the heap's last entry, and lives.
  for (int i = 0; i < 300; ++i) hs.push_back(loop.call_later(std::chrono::seconds(10 + i), [] {}));
  for (int i = 0; i < 150; ++i) hs[static_cast<std::size_t>(i)].cancel();
  CHECK(loop.timers_held() == 300);  // 150 dead of 300: not more than half
  hs[150].cancel();                  // 151 of 300: compacted now, with no turn run
  CHECK(loop.timers_held() == 149);
}

TEST_CASE("event loop: a cancelled timer at the heap's end is dropped at the cancel, with the dead before it",
          "[evloop][ch04]") {
  Watchdog dog(10s, "timer tail drop");
  EventLoop loop;
  Handle a = loop.call_later(10s, [] {});
  Handle b = loop.call_later(11s, [] {});
  Handle c = loop.call_later(12s, [] {});
  b.cancel();  // not at the end: stays until the top, a compaction or the end reaches it
  CHECK(loop.timers_held() == 3);
  c.cancel();  // the end: dropped, and b, now the end and dead, with it
  CHECK(loop.timers_held() == 1);
  a.cancel();
  CHECK(loop.timers_held() == 0);
}

TEST_CASE("timer heap: a cancel whose released captures cancel another timer keeps the dead count exact",
          "[evloop][ch04]") {
  // Handle::cancel tells the heap before it releases the callback: the captures' destructor
  // below cancels b, whose note then finds a already counted. Released first, a would be
  // dropped off the end by b's note before its own was counted, and the count would wrap.
  TimerHeap heap;
  auto b = HandlePtr::make([] {});
  struct CancelOnDestroy {
    explicit CancelOnDestroy(Handle handle) : h(std::move(handle)) {}
    ~CancelOnDestroy() { h.cancel(); }
    Handle h;
  };
  auto a = HandlePtr::make([c = std::make_shared<CancelOnDestroy>(Handle(b))] {});
  heap.push(10, b);
  heap.push(20, a);  // the end
  Handle(a).cancel();
  CHECK(heap.size() == 0);
  CHECK(heap.cancelled() == 0);
}

TEST_CASE("handle state: counted without a control block, freed into its thread's cache and reused from it",
          "[evloop][ch04]") {
  // Copies count; the last drop frees the state, and the next state made on this thread
  // takes its memory (the cache is a free list, last in first out).
  HandlePtr a = HandlePtr::make([] {});
  HandleState* const first = a.get();
  {
    HandlePtr b = a;
    HandlePtr c = std::move(b);
    CHECK(!b);
    CHECK(c.get() == first);
  }
  a.reset();
  if (HandleState::kCachedPerThread == 0) return;  // an AddressSanitizer build frees to the heap
  HandlePtr d = HandlePtr::make(nullptr);
  CHECK(d.get() == first);

  // A state any thread may hold, dropped last on another thread, goes to that thread's
  // cache, which its exit frees (the sanitizer builds would report a leak otherwise).
  HandlePtr shared = HandlePtr::make([] {}, HandleState::Holders::any_thread);
  HandleState* const second = shared.get();
  HandleState* reused = nullptr;
  std::thread other([moved = std::move(shared), &reused]() mutable {
    HandlePtr copy = moved;
    moved.reset();
    copy.reset();
    HandlePtr there = HandlePtr::make(nullptr);
    reused = there.get();
  });
  other.join();
  CHECK(reused == second);
}

#ifdef HANDOFF_LOOP_OWNER_CHECKED
// The contract of HandleState::Holders::loop_thread, checked (evloop/loop_owner.h): only in a
// build that checks it (NDEBUG undefined: the debug and tsan presets); in a release build
// nothing would stop the copy, and the first test below could not fail.

TEST_CASE(
    "handle owner: a loop-thread Handle copied or dropped on another thread while its loop runs ends the "
    "program, naming the contract",
    "[evloop][ch04]") {
  // In a child: it must abort. No Watchdog here: the fork wants one thread (run_in_forked_child).
  const bool copy = GENERATE(true, false);
  INFO((copy ? "copied" : "dropped"));
  const auto end = handoff::testkit::run_in_forked_child(
      [copy] {
        EventLoop loop;
        Handle timer = loop.call_later(std::chrono::hours(1), [] {});
        std::promise<void> running;
        loop.call_soon([&running] { running.set_value(); });  // the first turn: the loop runs from here to stop()
        std::thread loop_thread([&loop] { loop.run_forever(); });
        running.get_future().wait();
        if (copy) {
          Handle copied = timer;  // the break: this thread is not the one running the loop
        } else {
          timer = Handle();  // its old state dropped here: the break
        }
        loop.call_soon_threadsafe([&loop] { loop.stop(); });  // reached only if nothing checked
        loop_thread.join();
      },
      std::chrono::seconds(20));
  INFO("child's stderr: " << end.err);
  REQUIRE(end.status.has_value());  // it ended within its limit
  CHECK(*end.status == -SIGABRT);
  CHECK(end.err.find(copy ? "Handle was copied on a thread that is not running its loop"
                          : "Handle was dropped on a thread that is not running its loop") != std::string::npos);
  CHECK(end.err.find("HandleState::Holders::loop_thread") != std::string::npos);
}

TEST_CASE("handle owner: a loop-thread Handle is copied and dropped on any thread once its loop's run has ended",
          "[evloop][ch04]") {
  // The other side of the check: ordered after the run (a join), any thread may hold it. A
  // check that fired here would end this process, and the test with it.
  Watchdog dog(10s, "handles after the run");
  EventLoop loop;
  Handle timer = loop.call_later(std::chrono::hours(1), [] {});
  Handle soon = loop.call_soon([&loop, &timer] {
    Handle on_loop = timer;  // made on this test's thread, copied by the thread running the loop
    loop.stop();
  });
  std::thread loop_thread([&loop] { loop.run_forever(); });
  loop_thread.join();
  std::thread other([&timer, &soon] {
    Handle copied = timer;
    copied.cancel();
    soon = Handle();  // dropped here: its last holder, since the loop ran it
  });
  other.join();
  CHECK(timer.cancelled());
}
#endif  // HANDOFF_LOOP_OWNER_CHECKED

TEST_CASE("event loop: timers that fire can leave the dead in the majority, and the next turn compacts",
          "[evloop][ch04]") {
  Watchdog dog(10s, "timer compaction after firing");
  EventLoop loop;
  int fired = 0;
  // One deadline for all 120, so one turn fires them all: outside a run every call_later
  // reads the clock, and on a slow machine 120 reads can straddle two turns' pops (the
  // first pop then leaves the dead in the majority and the compaction comes a turn early).
  const auto due = EventLoop::Clock::now() + 5ms;
  for (int i = 0; i < 120; ++i) loop.call_at(due, [&fired] { ++fired; });
  Handle live = loop.call_later(std::chrono::seconds(1), [] {});  // the top once the 120 fired
  std::vector<Handle> dead;
  for (int i = 0; i < 110; ++i) dead.push_back(loop.call_later(std::chrono::seconds(10 + i), [] {}));
  Handle last = loop.call_later(std::chrono::seconds(200), [] {});  // keeps the dead off the end
  for (Handle& h : dead) h.cancel();
  CHECK(loop.timers_held() == 232);  // 110 dead of 232: not more than half
  loop.run_until([&fired] { return fired == 120; });
  CHECK(loop.timers_held() == 112);  // 110 dead of 112, not yet looked at
  loop.call_soon([&] { loop.stop(); });
  loop.run_forever();  // its turn's prune compacts: the top is live, so only the rule drops them
  CHECK(loop.timers_held() == 2);
  live.cancel();
  last.cancel();
}

TEST_CASE("event loop: stop() ends the run after the turn that called it, and a restart keeps FIFO", "[evloop][ch04]") {
  Watchdog dog(10s, "stop mid-turn");
  SECTION("generation: the turn's callbacks run, what it scheduled waits") {
    EventLoop loop(shape(TurnShape::generation));
    std::vector<std::string> ran;
    loop.call_soon([&] {
      ran.push_back("a");
      loop.call_soon([&] { ran.push_back("a-child"); });
    });
    loop.call_soon([&] {
      ran.push_back("stop");
      loop.stop();
      loop.call_soon([&] { ran.push_back("after-stop"); });
    });
    loop.call_soon([&] { ran.push_back("c"); });  // scheduled before the turn: still runs
    loop.run_forever();
    CHECK(ran == std::vector<std::string>{"a", "stop", "c"});
    loop.call_soon([&] { ran.push_back("new"); });
    loop.call_soon([&] { loop.stop(); });
    loop.run_forever();
    CHECK(ran == std::vector<std::string>{"a", "stop", "c", "a-child", "after-stop", "new"});
  }
  SECTION("drain: what was scheduled before the stop runs, what came after waits") {
    EventLoop loop(shape(TurnShape::drain));
    std::vector<std::string> ran;
    loop.call_soon([&] {
      ran.push_back("a");
      loop.call_soon([&] { ran.push_back("a-child"); });  // joins the drain: before the stop
    });
    loop.call_soon([&] {
      ran.push_back("stop");
      loop.stop();
      loop.call_soon([&] { ran.push_back("after-stop"); });
    });
    loop.call_soon([&] { ran.push_back("c"); });
    loop.run_forever();
    CHECK(ran == std::vector<std::string>{"a", "stop", "c", "a-child"});
    loop.call_soon([&] { ran.push_back("new"); });
    loop.call_soon([&] { loop.stop(); });
    loop.run_forever();
    CHECK(ran == std::vector<std::string>{"a", "stop", "c", "a-child", "after-stop", "new"});
  }
  SECTION("a stop() before the run: one turn, then the run returns") {
    EventLoop loop;
    int ran = 0;
    loop.call_soon([&] {
      ++ran;
      loop.call_soon([&] { ++ran; });
    });
    loop.stop();
    loop.run_forever();
    CHECK(ran == 1);
  }
}

TEST_CASE("event loop: readers and writers run at every readiness until removed", "[evloop][ch04]") {
  Watchdog dog(10s, "readers and writers");
  EventLoop loop;
  auto [a, b] = handoff::net::datagram_pair();
  int writes = 0, reads = 0;
  loop.add_writer(b.get(), [&] {  // a datagram socket is writable every turn
    const char byte = 'x';
    REQUIRE(::send(b.get(), &byte, 1, 0) == 1);
    if (++writes == 3) CHECK(loop.remove_writer(b.get()));
  });
  loop.add_reader(a.get(), [&] {
    char byte;
    REQUIRE(::recv(a.get(), &byte, 1, 0) == 1);
    if (++reads == 3) {
      CHECK(loop.remove_reader(a.get()));
      loop.call_later(20ms, [&] { loop.stop(); });  // turns enough to show nothing more runs
    }
  });
  loop.run_forever();
  CHECK(writes == 3);
  CHECK(reads == 3);
  CHECK_FALSE(loop.remove_reader(a.get()));
  CHECK_FALSE(loop.remove_writer(b.get()));
}

namespace {

/// A self-rescheduling call_soon chain beside a socket made readable before the run:
/// how many chain callbacks run before the socket's reader.
long chain_before_reader(TurnShape t) {
  EventLoop loop(shape(t));
  auto [a, b] = handoff::net::datagram_pair();
  const char byte = 'x';
  REQUIRE(::send(b.get(), &byte, 1, 0) == 1);
  long chain = 0;
  long seen = -1;
  std::function<void()> step = [&] {
    ++chain;
    if (seen < 0 && chain < 100'000) loop.call_soon(step);
  };
  loop.call_soon(step);
  loop.add_reader(a.get(), [&] {
    seen = chain;
    loop.remove_reader(a.get());
    loop.stop();
  });
  loop.run_forever();
  return seen;
}

}  // namespace

TEST_CASE("event loop: a call_soon chain holds a readable socket back under drain, not under generation",
          "[evloop][ch04]") {
  Watchdog dog(20s, "chain beside a socket");
  const long generation = chain_before_reader(TurnShape::generation);
  const long drain = chain_before_reader(TurnShape::drain);
  std::printf("chain callbacks before the readable socket's: generation %ld, drain %ld\n", generation, drain);
  INFO("generation " << generation << ", drain " << drain);
  CHECK(generation == 1);  // asyncio's shape: the poll comes first, the reader joins turn 1
  CHECK(drain > 64);
  CHECK(drain == static_cast<long>(EventLoop::kDrainCap) + 1);  // a full drain, then the poll
}

TEST_CASE("event loop: call_soon and call_soon_threadsafe interleave in scheduling order", "[evloop][ch04]") {
  Watchdog dog(20s, "local and posted order");
  for (auto t : {TurnShape::generation, TurnShape::drain}) {
    EventLoop loop(shape(t));
    std::vector<std::string> ran;
    std::atomic<int> asked{0}, posted{0};
    // A helper thread posts when asked; the loop's callback waits (bounded) until it has.
    std::thread helper([&] {
      for (int i = 0; i < 25; ++i) {
        // acquire: pairs with the release of `asked` below; the request is seen in order.
        if (!eventually([&] { return asked.load(std::memory_order_acquire) > i; }, 5s)) return;
        loop.call_soon_threadsafe([&ran, i] { ran.push_back("t" + std::to_string(i)); });
        // release: the post (and its mark) happens before the loop's next call_soon.
        posted.store(i + 1, std::memory_order_release);
      }
    });
    loop.call_soon([&] {
      for (int i = 0; i < 25; ++i) {
        loop.call_soon([&ran, i] { ran.push_back("l" + std::to_string(i)); });
        loop.call_soon_threadsafe([&ran, i] { ran.push_back("s" + std::to_string(i)); });  // same thread
        asked.store(i + 1, std::memory_order_release);  // release: pairs with the helper's acquire
        // acquire: pairs with the helper's release; the post is queued before what follows.
        REQUIRE(eventually([&] { return posted.load(std::memory_order_acquire) > i; }, 5s));
      }
      loop.call_soon([&] { loop.stop(); });
    });
    loop.run_forever();
    helper.join();
    std::vector<std::string> want;
    for (int i = 0; i < 25; ++i) {
      want.push_back("l" + std::to_string(i));
      want.push_back("s" + std::to_string(i));
      want.push_back("t" + std::to_string(i));
    }
    CHECK(ran == want);
  }
}

TEST_CASE("event loop: posts queued between runs go ahead of the next run's own callbacks", "[evloop][ch04]") {
  Watchdog dog(10s, "FIFO across a restart");
  EventLoop loop;
  std::vector<int> ran;
  loop.call_soon([&] { ran.push_back(0); });
  std::thread([&] { loop.call_soon_threadsafe([&] { ran.push_back(1); }); }).join();
  loop.call_soon([&] { ran.push_back(2); });
  loop.call_soon([&] { loop.stop(); });
  loop.run_forever();
  CHECK(ran == std::vector<int>{0, 1, 2});
}

TEST_CASE("event loop: call_soon_threadsafe from 4 threads keeps each producer's order", "[evloop][ch04]") {
  Watchdog dog(40s, "4 producers x 10k posts");
  constexpr int kThreads = 4, kEach = 10'000;
  EventLoop loop;
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
  loop.run_until([&] { return total == kThreads * kEach; });  // a lost wake hangs here: the watchdog fails it
  for (auto& t : producers) t.join();
  CHECK(out_of_order == 0);
  CHECK(total == kThreads * kEach);
}

TEST_CASE("event loop: a parked loop is woken by every call_soon_threadsafe (100k ping-pongs)", "[evloop][ch04]") {
  Watchdog dog(50s, "100k thread-safe wakes of a parked loop");
  constexpr int kRounds = 100'000;
  EventLoop loop;  // no timers: its waits block for ever, so one lost wake is a hang
  std::atomic<int> done{0};
  std::thread producer([&] {
    for (int i = 0; i < kRounds; ++i) {
      loop.call_soon_threadsafe([&done] {
        // release: pairs with the producer's acquire; the next post follows this run.
        done.fetch_add(1, std::memory_order_release);
      });
      // acquire: pairs with the release above. Wait for the loop to run it (so it parks again).
      while (done.load(std::memory_order_acquire) <= i) std::this_thread::yield();
    }
  });
  // relaxed: the loop thread's own counter read back; run_until returns once all ran.
  loop.run_until([&] { return done.load(std::memory_order_relaxed) == kRounds; });
  producer.join();
  std::printf("100k ping-pongs: blocking waits %llu, pokes taken %llu\n",
              static_cast<unsigned long long>(loop.counts().blocking_waits),
              static_cast<unsigned long long>(loop.counts().pokes_taken));
  // A poke only for a raised flag (one per flag: the exchange). Not per blocking wait: a
  // wait the re-check called off may still be poked, and that poke is read next turn.
  CHECK(loop.counts().pokes_taken <= loop.counts().wait_announcements);
  CHECK(loop.counts().blocking_waits > 0);
}

namespace {

/// A post lands between the loop's two steps before its wait (hook). Returns how long the
/// post took to run; the loop's wait is bounded by a 1000 ms timer.
std::chrono::milliseconds post_in_park_window(EventLoopSeams::ParkOrder order) {
  std::atomic<bool> armed{true};
  EventLoopSeams t;
  t.park_order = order;
  std::thread poster;
  EventLoop* self = nullptr;
  std::atomic<bool> posted{false};
  std::chrono::steady_clock::time_point sent, ran;
  t.between_park_steps = [&] {
    // relaxed: the hook's own one-shot flag, loop thread only.
    if (!armed.exchange(false, std::memory_order_relaxed)) return;
    poster = std::thread([&] {
      sent = std::chrono::steady_clock::now();
      self->call_soon_threadsafe([&] {
        ran = std::chrono::steady_clock::now();
        self->stop();
      });
      posted.store(true, std::memory_order_release);  // release: pairs with the hook's acquire
    });
    // acquire: pairs with the release above; the post is queued before the loop goes on.
    eventually([&] { return posted.load(std::memory_order_acquire); }, 2s);
  };
  EventLoop loop({}, t);
  self = &loop;
  loop.call_later(1000ms, [&] { loop.stop(); });
  loop.call_soon([] {});  // one turn without a wait first
  loop.run_forever();
  poster.join();
  return std::chrono::duration_cast<std::chrono::milliseconds>(ran - sent);
}

}  // namespace

TEST_CASE("event loop: a post between the loop's flag and its re-check wakes it", "[evloop][ch04]") {
  Watchdog dog(20s, "a post in the wait window");
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    CHECK(post_in_park_window(EventLoopSeams::ParkOrder::announce_then_recheck) < 300ms);
  }
}

TEST_CASE("event loop: negative control, a loop that re-checks before raising its flag sleeps through a post",
          "[evloop][ch04]") {
  Watchdog dog(20s, "the loop's broken wait order, forced");
  // The wait is bounded by the 1000 ms timer, so the lost wake shows as latency, not a hang.
  CHECK(post_in_park_window(EventLoopSeams::ParkOrder::recheck_then_announce) >= 800ms);
}

namespace {
/// Poll hooks that record what the loop told them and cap the wait at `cap_ms`.
struct RecordingHooks final : handoff::evloop::PollHooks {
  int cap_ms = -1;
  int before = 0;
  std::vector<int> waits;  // the timeout each poll was allowed, as after_poll heard it
  int before_poll() override {
    ++before;
    return cap_ms;
  }
  void after_poll(int timeout_ms) override { waits.push_back(timeout_ms); }
};
}  // namespace

namespace {
/// Poll hooks whose before_poll() spins for 300 ms, as a pool with a loop spin does while a
/// job is in flight (RingPoolOptions::loop_spin), and counts which hook the loop called.
struct SpinningHooks final : handoff::evloop::PollHooks {
  int before = 0, nonblocking = 0;
  int before_poll() override {
    ++before;
    std::this_thread::sleep_for(300ms);  // the spin: it burns the turn either way
    return -1;
  }
  void before_nonblocking_poll() override { ++nonblocking; }
  void after_poll(int) override {}
};
}  // namespace

TEST_CASE("event loop: a turn with callbacks ready asks its hooks for no wait, so a pool's loop spin never delays them",
          "[evloop][ch04]") {
  Watchdog dog(10s, "no spin before a poll that will not block");
  EventLoop loop;
  SpinningHooks hooks;
  loop.set_poll_hooks(&hooks);
  bool ran = false;
  loop.call_soon([&] { ran = true; });
  const auto start = std::chrono::steady_clock::now();
  loop.run_once(50);  // the callback is ready when the turn polls: the poll only looks
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(ran);
  CHECK(took < 200ms);  // with the spin before it (the old loop), 300 ms at least
  CHECK(hooks.before == 0);
  CHECK(hooks.nonblocking == 1);
  CHECK(loop.counts().nonblocking_hook_calls == 1);
  loop.run_once(1);  // nothing ready: a turn that may block prepares its wait
  CHECK(hooks.before == 1);
}

TEST_CASE("event loop: run_once runs one turn, its poll capped by the hooks and by its argument", "[evloop][ch04]") {
  Watchdog dog(10s, "run_once");
  EventLoop loop;
  RecordingHooks hooks;
  loop.set_poll_hooks(&hooks);
  int ran = 0;
  loop.call_soon([&] {
    ++ran;
    loop.call_soon([&] { ++ran; });  // the next generation: not this turn's
  });
  loop.run_once(50);
  CHECK(ran == 1);
  REQUIRE(hooks.waits.size() == 1);
  CHECK(hooks.waits[0] == 0);  // a callback was ready: the poll only looked

  loop.run_once(50);  // runs the second; its poll, with nothing ready, may wait
  CHECK(ran == 2);
  REQUIRE(hooks.waits.size() == 2);
  CHECK(hooks.waits[1] == 0);  // the second callback was ready when this turn polled

  hooks.cap_ms = 5;  // the hook's cap is lower than run_once's
  loop.run_once(50);
  REQUIRE(hooks.waits.size() == 3);
  CHECK(hooks.waits[2] == 5);
  hooks.cap_ms = -1;  // no cap from the hook: run_once's own
  loop.run_once(7);
  REQUIRE(hooks.waits.size() == 4);
  CHECK(hooks.waits[3] == 7);
  CHECK(hooks.before == 4);
  // Nothing else ran: the timeouts above ended both waits.
  CHECK(loop.counts().wait_timeouts == 2);
}

TEST_CASE("event loop: the wake spin catches a post that arrives while it spins, and the loop never blocks for it",
          "[evloop][ch04]") {
  Watchdog dog(10s, "wake spin");
  EventLoopOptions o;
  const bool spin = GENERATE(true, false);
  INFO("wake spin " << (spin ? "200 ms" : "off"));
  if (spin) o.wake_spin = {200'000'000, 200'000'000};  // far longer than the poster's delay
  EventLoop loop(o);
  std::thread poster([&] {
    std::this_thread::sleep_for(20ms);
    loop.call_soon_threadsafe([&] { loop.stop(); });
  });
  loop.run_forever();
  poster.join();
  if (spin) {
    CHECK(loop.counts().spin_catches == 1);
    CHECK(loop.counts().blocking_waits == 0);  // the spin saw the post: the poll only looked
    CHECK(loop.counts().pokes_taken == 0);
  } else {
    CHECK(loop.counts().spin_catches == 0);
    CHECK(loop.counts().blocking_waits == 1);  // it slept, and the post's poke woke it
    CHECK(loop.counts().pokes_taken == 1);
  }
}
