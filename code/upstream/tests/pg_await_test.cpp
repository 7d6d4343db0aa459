// upstream/tests/pg_await_test: the pool's coroutine waits (checkout, Lease) pinned with a fake
// connection (chapter 04).
// Role: a checkout served inside checkout() goes on without a turn; a lease checks in at
// scope end (a broken connection is closed); a frame destroyed while it waits withdraws from
// the queue, or checks in the connection that was already on its way (being opened, or
// reserved by a check-in whose wake had not run); a timeout is thrown. A fake stands in for
// PostgreSQL only to pin these rules; upstream/tests/pg_await_pg_test.cpp runs queries.
#include "upstream/pg_await.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "evloop/event_loop.h"
#include "evloop/task.h"
#include "evloop/task_set.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using handoff::evloop::EventLoop;
using handoff::evloop::Task;
using handoff::evloop::TaskSet;
using handoff::testkit::Watchdog;
using handoff::upstream::checkout;
using handoff::upstream::CheckoutError;
using handoff::upstream::QueuePool;
using handoff::upstream::QueuePoolOptions;

namespace {

struct FakeConn {
  FakeConn(int i, int* c) : id(i), closes(c) {}
  ~FakeConn() { ++*closes; }
  FakeConn(const FakeConn&) = delete;
  FakeConn& operator=(const FakeConn&) = delete;
  bool usable() const { return ok; }
  int id;
  int* closes;
  bool ok = true;
};

using Pool = QueuePool<FakeConn>;

// A pool of `size` + `overflow` whose connections open one loop turn after they are asked for.
struct Rig {
  Rig(std::size_t size, std::size_t overflow, std::chrono::milliseconds timeout = 5s)
      : pool(
            loop,
            [this](Pool::Served done) {
              loop.call_soon([this, done] { done(std::make_unique<FakeConn>(++last_id, &closes), {}); });
            },
            options(size, overflow, timeout)) {}

  static QueuePoolOptions options(std::size_t size, std::size_t overflow, std::chrono::milliseconds timeout) {
    QueuePoolOptions o;
    o.pool_size = size;
    o.max_overflow = overflow;
    o.timeout = timeout;
    return o;
  }
  // Check one connection out by callback and keep it in `held`.
  void hold_one() {
    pool.checkout([this](Pool::ConnPtr c, std::string) { held.push_back(std::move(c)); });
    loop.run_until([&] { return !held.empty(); });
  }
  // Run the loop's callbacks due now (one pass; nothing here waits on a descriptor).
  void turn() {
    loop.call_soon([] {});
    loop.run_until([] { return true; });
  }

  EventLoop loop;
  int last_id = 0;
  int closes = 0;
  std::vector<Pool::ConnPtr> held;
  Pool pool;
  TaskSet tasks{loop};  // after the pool: destroyed first, while the pool exists
};

// Check a connection out, note its id, and (with `spoil`) mark it unusable before the lease ends.
Task<void> use_one(Pool& pool, int& got, bool spoil = false) {
  auto lease = co_await checkout(pool);
  got = lease->id;
  if (spoil) lease->ok = false;
}

Task<void> expect_timeout(Pool& pool, std::string& error) {
  try {
    auto lease = co_await checkout(pool);
  } catch (const CheckoutError& e) {
    error = e.what();
  }
}

}  // namespace

TEST_CASE("pg await: a checkout served from the idle queue goes on without a loop turn", "[pg_await][ch04]") {
  Watchdog dog(10s, "checkout from the idle queue");
  Rig r(1, 0);
  r.hold_one();
  r.pool.checkin(std::move(r.held.back()));  // now idle
  r.held.clear();
  int got = 0;
  r.tasks.spawn(use_one(r.pool, got));
  // No loop turn ran: the task was served inside checkout() and has ended.
  CHECK(r.tasks.size() == 0);
  CHECK(got == 1);
  CHECK(r.pool.counts().idle == 1);  // the lease checked it back in
  CHECK(r.pool.counts().opened == 1);
}

TEST_CASE("pg await: a lease checks its connection in when its scope ends, and a broken one is closed",
          "[pg_await][ch04]") {
  Watchdog dog(10s, "lease check-in");
  Rig r(2, 0);
  int got = 0;
  r.tasks.spawn(use_one(r.pool, got));
  r.loop.run_until([&] { return r.tasks.size() == 0; });
  CHECK(got == 1);
  CHECK(r.pool.counts().idle == 1);
  CHECK(r.closes == 0);
  r.tasks.spawn(use_one(r.pool, got, /*spoil=*/true));
  CHECK(r.tasks.size() == 0);  // served from the idle queue at once
  CHECK(r.pool.counts().closed_broken == 1);
  CHECK(r.pool.counts().idle == 0);
  CHECK(r.pool.counts().open == 0);
  CHECK(r.closes == 1);
}

TEST_CASE("pg await: a task destroyed while it waits in the queue withdraws its place", "[pg_await][ch04]") {
  Watchdog dog(10s, "withdraw a waiter");
  Rig r(1, 0);
  r.hold_one();
  int got = 0;
  r.tasks.spawn(use_one(r.pool, got));
  REQUIRE(r.pool.waiting() == 1);
  r.tasks.cancel_all();
  CHECK(r.pool.waiting() == 0);
  // The held connection goes back to the idle queue, wakes nobody, and serves the next at once.
  r.pool.checkin(std::move(r.held.back()));
  r.held.clear();
  CHECK(r.pool.counts().idle == 1);
  r.tasks.spawn(use_one(r.pool, got));
  CHECK(r.tasks.size() == 0);
  CHECK(got == 1);
  CHECK(r.pool.counts().timeouts == 0);
  CHECK(r.closes == 0);
}

TEST_CASE("pg await: a task destroyed while its connection is opened checks the connection in when it arrives",
          "[pg_await][ch04]") {
  Watchdog dog(10s, "abandoned open");
  Rig r(1, 0);
  int got = 0;
  r.tasks.spawn(use_one(r.pool, got));
  REQUIRE(r.pool.counts().open == 1);  // opening: not a waiter, nothing to withdraw
  r.tasks.cancel_all();
  r.turn();  // the open completes and finds its frame gone
  CHECK(got == 0);
  CHECK(r.pool.counts().opened == 1);
  CHECK(r.pool.counts().idle == 1);  // checked in, not dropped: the pool's slot is not lost
  CHECK(r.closes == 0);
  r.tasks.spawn(use_one(r.pool, got));
  CHECK(r.tasks.size() == 0);
  CHECK(got == 1);
}

TEST_CASE("pg await: a task destroyed after a check-in woke it leaves the reserved connection to the idle queue",
          "[pg_await][ch04]") {
  Watchdog dog(10s, "abandoned wake");
  Rig r(1, 0);
  r.hold_one();
  int got = 0;
  r.tasks.spawn(use_one(r.pool, got));
  REQUIRE(r.pool.waiting() == 1);
  r.pool.checkin(std::move(r.held.back()));  // wakes the task: its connection is reserved for it
  r.held.clear();
  REQUIRE(r.pool.waiting() == 0);
  r.tasks.cancel_all();  // before the wake runs
  r.turn();              // the wake finds its frame gone: the connection is checked in again
  CHECK(got == 0);
  CHECK(r.pool.counts().idle == 1);
  CHECK(r.closes == 0);
  r.tasks.spawn(use_one(r.pool, got));
  CHECK(r.tasks.size() == 0);  // free, not still reserved for the dead task
  CHECK(got == 1);
}

TEST_CASE("pg await: a checkout that times out throws CheckoutError", "[pg_await][ch04]") {
  Watchdog dog(10s, "checkout timeout");
  Rig r(1, 0, 20ms);
  r.hold_one();
  std::string error;
  r.tasks.spawn(expect_timeout(r.pool, error));
  r.loop.run_until([&] { return r.tasks.size() == 0; });
  CHECK(error.find("timed out") != std::string::npos);
  CHECK(r.pool.counts().timeouts == 1);
}
