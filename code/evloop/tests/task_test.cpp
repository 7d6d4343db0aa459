// evloop/tests/task_test: Task<T> on the loop: lazy start, resumption order, values and
// exceptions through a chain, and a task destroyed while it waits on a timer, a descriptor
// or an executor call, whose wait must be withdrawn (chapter 04).
#include "evloop/task.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "evloop/awaitables.h"
#include "evloop/executor.h"
#include "evloop/task_set.h"
#include "net/fd.h"
#include "pool/elastic_pool.h"
#include "stats/thread_cpu.h"
#include "testkit/pool_binding.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using namespace handoff;
using evloop::EventLoop;
using evloop::Task;
using evloop::TaskSet;
using testkit::Watchdog;

namespace {

/// Run turns until `done()` or `limit`; false at the limit.
template <class Pred>
bool run_until(EventLoop& loop, Pred done, std::chrono::milliseconds limit = 5s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    loop.run_once(10);
  }
  return true;
}

Task<void> sleeper(EventLoop& loop, std::chrono::milliseconds d, int id, std::vector<int>& order) {
  co_await evloop::sleep_for(loop, d);
  order.push_back(id);
}

Task<int> add_later(EventLoop& loop, int a, int b) {
  co_await evloop::sleep_for(loop, 1ms);
  co_return a + b;
}

Task<int> fails(EventLoop& loop) {
  co_await evloop::sleep_for(loop, 1ms);
  throw std::runtime_error("failed after a sleep");
}

}  // namespace

TEST_CASE("task: a Task is lazy: its body runs only once it is awaited or spawned", "[evloop][ch04]") {
  EventLoop loop;
  bool started = false;
  auto body = [&]() -> Task<void> {
    started = true;
    co_return;
  };
  Task<void> t = body();
  CHECK_FALSE(started);
  TaskSet set(loop);
  set.spawn(std::move(t));
  CHECK(started);          // spawn runs it up to its first suspension: here, its end
  CHECK(set.size() == 0);  // ended inside spawn, and freed
}

TEST_CASE("task: sleeping tasks resume in deadline order, equal deadlines in the order they slept", "[evloop][ch04]") {
  Watchdog dog(10s, "sleep order");
  for (auto shape : {evloop::TurnShape::generation, evloop::TurnShape::drain}) {
    evloop::EventLoopOptions options;
    options.turn = shape;
    EventLoop loop(options);
    TaskSet set(loop);
    std::vector<int> order;
    set.spawn(sleeper(loop, 30ms, 1, order));
    set.spawn(sleeper(loop, 10ms, 2, order));
    set.spawn(sleeper(loop, 20ms, 3, order));
    set.spawn(sleeper(loop, 0ms, 4, order));
    set.spawn(sleeper(loop, 0ms, 5, order));
    CHECK(order.empty());  // even a zero sleep goes through the loop
    CHECK(set.size() == 5);
    REQUIRE(run_until(loop, [&] { return set.size() == 0; }));
    CHECK(order == std::vector<int>{4, 5, 2, 3, 1});
  }
}

TEST_CASE("task: values and exceptions travel up a chain of awaited tasks", "[evloop][ch04]") {
  Watchdog dog(10s, "task chain");
  EventLoop loop;
  TaskSet set(loop);
  int sum = 0;
  std::string caught;
  auto outer = [&]() -> Task<void> {
    const int a = co_await add_later(loop, 1, 2);
    const int b = co_await add_later(loop, a, 10);
    sum = b;
    try {
      co_await fails(loop);
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
  };
  set.spawn(outer());
  REQUIRE(run_until(loop, [&] { return set.size() == 0; }));
  CHECK(sum == 13);
  CHECK(caught == "failed after a sleep");
}

TEST_CASE("task: an exception a spawned task lets out reaches done, or without done ends the loop's run",
          "[evloop][ch04]") {
  Watchdog dog(10s, "spawned exception");
  EventLoop loop;
  TaskSet set(loop);
  std::string seen;
  // A coroutine lambda's captures live in the closure, which must outlive the task: named.
  auto body = [&]() -> Task<void> { co_await fails(loop); };
  set.spawn(body(), [&](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::runtime_error& err) {
      seen = err.what();
    }
  });
  REQUIRE(run_until(loop, [&] { return set.size() == 0; }));
  CHECK(seen == "failed after a sleep");

  set.spawn(body());
  loop.call_later(2s, [&] { loop.stop(); });  // bound: the run must end by the exception first
  CHECK_THROWS_WITH(loop.run_forever(), "failed after a sleep");
  CHECK(set.size() == 0);
}

TEST_CASE("task: a task destroyed while it sleeps cancels its timer, which then never runs nor wakes the loop",
          "[evloop][ch04]") {
  Watchdog dog(10s, "destroyed sleeper");
  EventLoop loop;
  bool after_sleep = false;
  {
    TaskSet set(loop);
    auto sleep_then_flag = [&]() -> Task<void> {
      co_await evloop::sleep_for(loop, 20ms);
      after_sleep = true;
    };
    set.spawn(sleep_then_flag());
    CHECK(loop.timers_held() == 1);
    set.cancel_all();
    CHECK(set.size() == 0);
  }
  // The timer is cancelled, so the loop's only live timer is the stop below: the dead one
  // runs no callback (without the cancel it would resume a freed frame) and ends no wait.
  loop.call_later(60ms, [&] { loop.stop(); });
  loop.run_forever();
  CHECK_FALSE(after_sleep);
  CHECK(loop.counts().callbacks_run == 1);  // the stop alone
  CHECK(loop.counts().wait_timeouts == 1);  // the stop's deadline alone
}

TEST_CASE("task: readable and writable resume once and remove their watch, also when the task is destroyed",
          "[evloop][ch04]") {
  Watchdog dog(10s, "readiness awaiters");
  EventLoop loop;
  int fds[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0);
  const net::Fd a(fds[0]), b(fds[1]);
  TaskSet set(loop);
  int wakes = 0;
  char got = 0;
  auto write_then_read = [&]() -> Task<void> {
    co_await evloop::writable(loop, a.get());
    ++wakes;
    co_await evloop::readable(loop, a.get());
    ++wakes;
    REQUIRE(::read(a.get(), &got, 1) == 1);
  };
  set.spawn(write_then_read());
  REQUIRE(run_until(loop, [&] { return wakes == 1; }));
  CHECK_FALSE(loop.remove_writer(a.get()));  // the writable wait removed its writer
  loop.run_once(20);
  CHECK(wakes == 1);  // nothing to read yet
  REQUIRE(::write(b.get(), "x", 1) == 1);
  REQUIRE(run_until(loop, [&] { return set.size() == 0; }));
  CHECK(wakes == 2);
  CHECK(got == 'x');
  CHECK_FALSE(loop.remove_reader(a.get()));  // and the readable wait its reader

  // Destroyed while waiting to read: its reader goes with it, so data that arrives later
  // runs nothing (without the removal it would resume a freed frame).
  bool resumed = false;
  auto wait_to_read = [&]() -> Task<void> {
    co_await evloop::readable(loop, a.get());
    resumed = true;
  };
  set.spawn(wait_to_read());
  loop.run_once(0);
  set.cancel_all();
  CHECK_FALSE(loop.remove_reader(a.get()));
  REQUIRE(::write(b.get(), "y", 1) == 1);
  const auto ran = loop.counts().callbacks_run;
  loop.run_once(20);
  CHECK_FALSE(resumed);
  CHECK(loop.counts().callbacks_run == ran);
}

namespace {
// relaxed (all): test flags polled in bounded loops; they publish nothing else.
std::atomic<bool> g_release{false};
std::atomic<int> g_started{0};
std::atomic<int> g_finished{0};
int held_work() {
  g_started.fetch_add(1, std::memory_order_relaxed);
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (!g_release.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(1ms);
  }
  g_finished.fetch_add(1, std::memory_order_relaxed);
  return 7;
}
}  // namespace

TEST_CASE("task: co_await run_in_executor round trips on a real ElasticPool, value and exception", "[evloop][ch04]") {
  Watchdog dog(20s, "executor awaits");
  EventLoop loop;
  stats::Registry registry;
  pool::ElasticPool pool(pool::PoolConfig{0, 2});
  testkit::PoolBinding binding(loop, pool, registry);
  evloop::Executor executor(loop, pool);
  TaskSet set(loop);
  const auto loop_thread = std::this_thread::get_id();
  std::vector<int> values;
  std::string caught;
  bool resumed_on_loop = true;
  auto square_on_pool = [&]() -> Task<void> {
    for (int i = 0; i < 50; ++i) {
      const auto [v, where] = co_await evloop::run_in_executor(executor, [i] {
        return std::pair{i * i, std::this_thread::get_id()};
      });
      if (where == loop_thread) values.push_back(-1);  // must have run on a pool thread
      if (std::this_thread::get_id() != loop_thread) resumed_on_loop = false;
      values.push_back(v);
    }
    try {
      co_await evloop::run_in_executor(executor, []() -> int { throw std::logic_error("pool-side failure"); });
    } catch (const std::logic_error& e) {
      caught = e.what();
    }
  };
  set.spawn(square_on_pool());
  REQUIRE(run_until(loop, [&] { return set.size() == 0; }));
  REQUIRE(values.size() == 50);
  for (int i = 0; i < 50; ++i) CHECK(values[static_cast<std::size_t>(i)] == i * i);
  CHECK(resumed_on_loop);
  CHECK(caught == "pool-side failure");
  executor.stop(pool::HandlerPool::kNoDeadline);
}

TEST_CASE("task: a task destroyed while its executor call runs is never resumed by the call's completion",
          "[evloop][ch04]") {
  Watchdog dog(20s, "destroyed executor waiter");
  g_release = false;
  g_started = 0;
  g_finished = 0;
  EventLoop loop;
  stats::Registry registry;
  pool::ElasticPool pool(pool::PoolConfig{0, 1});
  testkit::PoolBinding binding(loop, pool, registry);
  evloop::Executor executor(loop, pool);
  TaskSet set(loop);
  bool resumed = false;
  auto wait_on_held_work = [&]() -> Task<void> {
    co_await evloop::run_in_executor(executor, held_work);
    resumed = true;
  };
  set.spawn(wait_on_held_work());
  REQUIRE(run_until(loop, [] { return g_started.load() == 1; }));
  set.cancel_all();  // the frame goes while its work runs
  g_release = true;
  // The completion still comes back (the call ends, once) and finds nobody to resume.
  REQUIRE(run_until(loop, [&] { return executor.in_flight() == 0; }));
  CHECK(g_finished.load() == 1);
  CHECK_FALSE(resumed);
  executor.stop(pool::HandlerPool::kNoDeadline);
}

TEST_CASE("task: a pool stopped with a coroutine's call queued resumes it with an ExecutorError", "[evloop][ch04]") {
  Watchdog dog(20s, "stopped pool with a queued call");
  g_release = false;
  g_started = 0;
  g_finished = 0;
  EventLoop loop;
  stats::Registry registry;
  pool::ElasticPool pool(pool::PoolConfig{0, 1});
  testkit::PoolBinding binding(loop, pool, registry);
  evloop::Executor executor(loop, pool);
  TaskSet set(loop);
  std::vector<std::string> outcomes;
  auto waiter = [&](bool hold) -> Task<void> {
    try {
      const int v = co_await evloop::run_in_executor(executor, [hold] { return hold ? held_work() : 1; });
      outcomes.push_back("value " + std::to_string(v));
    } catch (const evloop::ExecutorError&) {
      outcomes.emplace_back("ExecutorError");
    }
  };
  set.spawn(waiter(true));   // holds the pool's only thread...
  set.spawn(waiter(false));  // ...so this one is queued behind it
  REQUIRE(run_until(loop, [] { return g_started.load() == 1; }));
  loop.call_later(30ms, [] { g_release = true; });  // the held one finishes after the deadline below
  // A 10 ms deadline: the queued call is dropped; the held one's thread is let go of.
  executor.stop(stats::monotonic_ns() + 10'000'000);
  REQUIRE(run_until(loop, [&] { return set.size() == 0; }));
  CHECK(outcomes == std::vector<std::string>{"ExecutorError", "ExecutorError"});
  const auto end = std::chrono::steady_clock::now() + 5s;
  g_release = true;
  while (g_finished.load() == 0 && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);  // let the thread that was let go of leave run_job
}
