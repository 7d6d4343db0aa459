// evloop/tests/executor_test: run_in_executor on each pool of chapters 01-03 bound to a
// standalone loop: values and exceptions come back on the loop thread, a pool stopped with
// tasks queued or running still ends every call, once, and a loop-thread Handle travels in a
// callable only inside a HandleCarrier (chapter 04).
#include "evloop/executor.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "evloop/handle_carrier.h"
#include "pool/datagram_pool.h"
#include "pool/elastic_pool.h"
#include "pool/ring_pool.h"
#include "stats/thread_cpu.h"
#include "testkit/forked_child.h"
#include "testkit/pool_binding.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using namespace handoff;
using evloop::EventLoop;
using evloop::Executor;
using evloop::ExecutorError;
using evloop::Handle;
using evloop::HandleCarrier;
using evloop::Result;
using testkit::Watchdog;

namespace {

std::unique_ptr<pool::HandlerPool> make_pool(const std::string& kind, int threads) {
  const pool::PoolConfig config{0, threads};
  if (kind == "datagram") return std::make_unique<pool::DatagramPool>(config);
  if (kind == "ring") return std::make_unique<pool::RingPool>(config);
  return std::make_unique<pool::ElasticPool>(config);
}

/// A loop, a pool bound to it, and an executor over both.
struct Rig {
  explicit Rig(const std::string& kind, int threads = 2)
      : pool(make_pool(kind, threads)), binding(loop, *pool, registry), executor(loop, *pool) {}
  ~Rig() { executor.stop(pool::HandlerPool::kNoDeadline); }
  /// Run the loop until `done()` or `limit`; false at the limit.
  template <class Pred>
  bool run_until(Pred done, std::chrono::milliseconds limit = 5s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      loop.run_once(10);
    }
    return true;
  }
  EventLoop loop;
  stats::Registry registry;
  std::unique_ptr<pool::HandlerPool> pool;
  testkit::PoolBinding binding;
  Executor executor;
};

// A task that holds its thread until the test lets it go (or 5 s pass). relaxed (all):
// test flags polled in bounded loops; they publish nothing else.
std::atomic<bool> g_let_go{false};
std::atomic<int> g_held{0};
std::atomic<int> g_held_done{0};
int hold() {
  g_held.fetch_add(1, std::memory_order_relaxed);
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (!g_let_go.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(1ms);
  }
  g_held_done.fetch_add(1, std::memory_order_relaxed);
  return -1;
}

}  // namespace

TEST_CASE("executor: each call's value comes back once, on the loop thread, from every pool kind", "[evloop][ch04]") {
  Watchdog dog(30s, "executor round trips");
  const std::string kind = GENERATE("datagram", "ring", "elastic");
  INFO("pool " << kind);
  Rig rig(kind);
  const auto loop_thread = std::this_thread::get_id();
  constexpr int kCalls = 200;
  std::vector<int> got(kCalls, 0);
  int received = 0;
  int on_loop = 0;
  std::atomic<int> off_loop{0};
  for (int i = 0; i < kCalls; ++i) {
    rig.executor.submit(
        [i, loop_thread, &off_loop] {
          if (std::this_thread::get_id() != loop_thread) off_loop.fetch_add(1, std::memory_order_relaxed);
          return i * 3;
        },
        [&, i](Result<int> r) {
          got[static_cast<std::size_t>(i)] += std::move(r).get();
          ++received;
          if (std::this_thread::get_id() == loop_thread) ++on_loop;
        });
  }
  CHECK(received == 0);  // never inside submit
  REQUIRE(rig.run_until([&] { return received == kCalls; }));
  for (int i = 0; i < kCalls; ++i) CHECK(got[static_cast<std::size_t>(i)] == i * 3);
  CHECK(on_loop == kCalls);
  CHECK(off_loop.load() == kCalls);
  CHECK(rig.executor.in_flight() == 0);
}

TEST_CASE("executor: an exception thrown by the callable reaches the receiver", "[evloop][ch04]") {
  Watchdog dog(10s, "executor exception");
  Rig rig("elastic");
  std::string what;
  bool done = false;
  rig.executor.submit([]() -> int { throw std::runtime_error("boom on a pool thread"); },
                      [&](Result<int> r) {
                        try {
                          std::move(r).get();
                        } catch (const std::runtime_error& e) {
                          what = e.what();
                        }
                        done = true;
                      });
  REQUIRE(rig.run_until([&] { return done; }));
  CHECK(what == "boom on a pool thread");
}

TEST_CASE("executor: a pool stopped with tasks queued and one running ends every call with an ExecutorError",
          "[evloop][ch04]") {
  Watchdog dog(20s, "executor stop with tasks queued");
  g_let_go = false;
  g_held = 0;
  g_held_done = 0;
  {
    Rig rig("elastic", 1);
    std::vector<std::string> errors;
    int values = 0;
    auto receive = [&](Result<int> r) {
      try {
        std::move(r).get();
        ++values;
      } catch (const ExecutorError& e) {
        errors.emplace_back(e.what());
      }
    };
    rig.executor.submit(hold, receive);                                          // the one thread holds this one...
    for (int i = 0; i < 3; ++i) rig.executor.submit([] { return 0; }, receive);  // ...so these queue
    REQUIRE(rig.run_until([] { return g_held.load() == 1; }));
    // Past its deadline the stop drops the three queued (each ends through its own post)
    // and lets go of the thread inside hold() (its call ends through the executor's sweep).
    rig.executor.stop(stats::monotonic_ns() + 50'000'000);
    REQUIRE(rig.run_until([&] { return errors.size() + static_cast<std::size_t>(values) >= 4; }, 2s));
    rig.loop.run_once(20);  // nothing more may come: each call ends once
    CHECK(values == 0);
    REQUIRE(errors.size() == 4);
    int dropped = 0, let_go = 0;
    for (const auto& e : errors) {
      if (e.find("dropped unrun") != std::string::npos) ++dropped;
      if (e.find("let go of") != std::string::npos) ++let_go;
    }
    CHECK(dropped == 3);
    CHECK(let_go == 1);
    CHECK(rig.executor.in_flight() == 0);

    // A call after the stop ends at once (in a callback) with an ExecutorError.
    bool late = false;
    rig.executor.submit([] { return 1; }, [&](Result<int> r) { late = r.error() != nullptr; });
    REQUIRE(rig.run_until([&] { return late; }, 1s));
  }
  // The thread that was let go of finishes its work later and touches nothing of the
  // loop's (under ASan a touch of the destroyed loop would be a failure here).
  g_let_go = true;
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (g_held_done.load() == 0 && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  CHECK(g_held_done.load() == 1);
  std::this_thread::sleep_for(20ms);  // let it leave run_job
}

TEST_CASE("executor: a task run leaves the ring pool's loop spin nothing to wait for", "[evloop][ch04]") {
  Watchdog dog(20s, "ring pool loop spin after a task");
  // The ring pool's loop spins before a wait while answers it expects are out. A task
  // answers through the loop's own queue, never as a frame: counted as out, it would make
  // every later wait spin its whole budget (yielding: one counted syscall per look).
  pool::RingPoolOptions options;
  options.loop_spin = sync::SpinPolicy{2'000'000, 0};
  EventLoop loop;
  stats::Registry registry;
  pool::RingPool pool(pool::PoolConfig{0, 1}, options);
  testkit::PoolBinding binding(loop, pool, registry);
  Executor executor(loop, pool);
  bool done = false;
  executor.submit([] { return 1; }, [&](Result<int>) { done = true; });
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (!done && std::chrono::steady_clock::now() < end) loop.run_once(10);
  REQUIRE(done);
  auto loop_syscalls = [&] {
    const auto json = registry.to_json();
    for (const auto& t : json["threads"]) {
      if (t["name"] == "loop") return t["counters"]["syscalls"].get<std::uint64_t>();
    }
    return std::uint64_t{0};
  };
  const std::uint64_t before = loop_syscalls();
  for (int i = 0; i < 5; ++i) loop.run_once(0);
  CHECK(loop_syscalls() - before < 20);  // five idle turns: no spin (a spin of 2 ms yields hundreds of times)
  executor.stop(pool::HandlerPool::kNoDeadline);
}

// A callable's captures are destroyed on its pool thread, so a loop-thread Handle travels in
// one only inside a HandleCarrier. The loop runs through each call (run_forever, not the
// Rig's run_once steps), so that a debug build's owner check (evloop/loop_owner.h) sees the
// loop running whenever the pool thread touches the capture.

TEST_CASE("executor: a HandleCarrier takes a timer's Handle to a pool thread and back, and the loop cancels it",
          "[evloop][ch04]") {
  Watchdog dog(10s, "a handle carried there and back");
  Rig rig("elastic");
  int fired = 0;
  Handle timer = rig.loop.call_later(1h, [&fired] { ++fired; });
  bool taken = false;
  rig.executor.submit([carrier = HandleCarrier(rig.loop, timer)]() mutable { return std::move(carrier); },
                      [&](Result<HandleCarrier> r) {
                        HandleCarrier back = std::move(r).get();
                        taken = back.holds();
                        back.take().cancel();  // on the loop's thread
                        rig.loop.stop();
                      });
  rig.loop.run_forever();
  CHECK(taken);
  CHECK(timer.cancelled());
  CHECK(fired == 0);
}

TEST_CASE("executor: a HandleCarrier dropped full on its pool thread sends the drop to the loop", "[evloop][ch04]") {
  Watchdog dog(10s, "a handle's drop sent back");
  Rig rig("elastic");
  Handle timer = rig.loop.call_later(1h, [] {});
  bool held = false;
  const auto before = rig.loop.counts().callbacks_run;
  rig.executor.submit([carrier = HandleCarrier(rig.loop, timer)] { return carrier.holds(); },  // dropped there
                      [&](Result<bool> r) {
                        held = std::move(r).get();
                        rig.loop.stop();
                      });
  rig.loop.run_forever();
  CHECK(held);
  // Two callbacks: the carrier's drop, posted by the pool thread as it destroyed the
  // callable, and then the call's result (a bare Handle would have made only the second,
  // and been dropped on the pool thread).
  CHECK(rig.loop.counts().callbacks_run - before == 2);
  timer.cancel();
}

#ifdef HANDOFF_LOOP_OWNER_CHECKED
TEST_CASE(
    "executor: negative control, a callable that captures a bare timer Handle is stopped by the owner check "
    "when its pool thread drops it",
    "[evloop][ch04]") {
  // The trap the carrier exists for, in a child that must abort (a debug build's check; a
  // release build would lose the count update instead). No Watchdog: the fork wants one thread.
  const auto end = testkit::run_in_forked_child(
      [] {
        Rig rig("elastic");
        Handle timer = rig.loop.call_later(1h, [] {});
        rig.executor.submit([timer] { return timer.cancelled(); },  // the capture dies on the pool thread
                            [&rig](Result<bool>) { rig.loop.stop(); });
        rig.loop.run_forever();
      },
      20s);
  INFO("child's stderr: " << end.err);
  REQUIRE(end.status.has_value());  // it ended within its limit
  CHECK(*end.status == -SIGABRT);
  CHECK(end.err.find("Handle was dropped on a thread that is not running its loop") != std::string::npos);
  CHECK(end.err.find("evloop::HandleCarrier") != std::string::npos);
}
#endif  // HANDOFF_LOOP_OWNER_CHECKED
