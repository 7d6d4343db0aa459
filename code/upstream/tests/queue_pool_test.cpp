// upstream/tests/queue_pool_test: QueuePool's rules, each pinned with a fake connection
// (chapter 04).
// Role: the idle queue's bound and the close it causes (seed 003's churn in miniature: a burst
// of check-ins in one turn closes the overflow, the next burst opens it again), FIFO waiters,
// the checkout timeout and its cancellation. A fake stands in for PostgreSQL only to pin a
// rule; upstream/tests/pg_test runs the pool against a real server.
#include "upstream/queue_pool.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "evloop/event_loop.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using handoff::evloop::EventLoop;
using handoff::testkit::Watchdog;
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
using Conn = Pool::ConnPtr;

// A pool whose connections open one loop turn after they are asked for, as a real one does
// (later: many turns); `fail_opens` makes the next opens fail.
struct Rig {
  explicit Rig(QueuePoolOptions o)
      : pool(
            loop,
            [this](Pool::Served done) {
              ++connects;
              loop.call_soon([this, done] {
                if (fail_opens > 0) {
                  --fail_opens;
                  done(nullptr, "refused");
                } else {
                  done(std::make_unique<FakeConn>(++last_id, &closes), {});
                }
              });
            },
            o) {}

  // Check out `n`, keeping what is served (in order) in `held`.
  void checkout(int n) {
    for (int i = 0; i < n; ++i) {
      pool.checkout([this](Conn c, std::string error) {
        if (c) held.push_back(std::move(c));
        if (!error.empty()) errors.push_back(error);
      });
    }
  }
  void run_until_held(std::size_t n) {
    if (held.size() < n) loop.run_until([&] { return held.size() >= n; });  // a run with nothing due would block
  }
  // Check every held connection in from one callback: one turn.
  void checkin_all_in_one_turn() {
    loop.call_soon([this] {
      for (auto& c : held) pool.checkin(std::move(c));
      held.clear();
    });
    loop.run_until([] { return true; });
  }

  EventLoop loop;
  int last_id = 0;
  int closes = 0;
  int fail_opens = 0;
  int connects = 0;  // times the pool asked the connector for a connection
  std::vector<Conn> held;
  std::vector<std::string> errors;
  Pool pool;
};

QueuePoolOptions opts(std::size_t size, std::size_t overflow, std::chrono::milliseconds timeout = 5s) {
  QueuePoolOptions o;
  o.pool_size = size;
  o.max_overflow = overflow;
  o.timeout = timeout;
  return o;
}

}  // namespace

TEST_CASE(
    "queue pool: six connections checked in within one turn into an idle queue of four close two, "
    "and the next burst of checkouts opens two new ones",
    "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool burst");
  Rig r(opts(4, 2));
  r.checkout(6);
  r.run_until_held(6);
  CHECK(r.pool.counts().opened == 6);
  CHECK(r.pool.counts().open == 6);

  r.checkin_all_in_one_turn();
  CHECK(r.pool.counts().closed_on_checkin == 2);
  CHECK(r.closes == 2);
  CHECK(r.pool.counts().idle == 4);
  CHECK(r.pool.counts().open == 4);

  r.checkout(6);  // four from the idle queue at once, two opened anew
  CHECK(r.held.size() == 4);
  r.run_until_held(6);
  CHECK(r.pool.counts().opened == 8);
  CHECK(r.pool.counts().peak_open == 6);
  CHECK(r.pool.counts().waits == 0);
}

TEST_CASE(
    "queue pool: a burst of check-ins in one turn, before the woken waiters run, fills the idle queue "
    "and closes the overflow, while the same check-ins one per turn close nothing",
    "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool waiters and bursts");
  const bool burst = GENERATE(true, false);
  Rig r(opts(4, 2));
  r.checkout(6);
  r.run_until_held(6);
  r.checkout(2);  // the seed's shape: 8 requests for 4 + 2 connections; two wait
  CHECK(r.pool.waiting() == 2);
  CHECK(r.pool.counts().waits == 2);

  std::vector<Conn> returning = std::move(r.held);
  r.held.clear();
  std::function<void(std::size_t)> step;
  if (burst) {
    r.loop.call_soon([&] {
      for (auto& c : returning) r.pool.checkin(std::move(c));
    });
  } else {
    // One check-in per callback, each scheduling the next: a woken waiter (scheduled by the
    // check-in) runs before the next check-in.
    step = [&](std::size_t i) {
      r.pool.checkin(std::move(returning[i]));
      if (i + 1 < returning.size()) r.loop.call_soon([&step, i] { step(i + 1); });
    };
    r.loop.call_soon([&step] { step(0); });
  }
  r.loop.run_until([&] { return r.held.size() == 2 && r.pool.counts().idle + 2 == r.pool.counts().open; });
  CHECK(r.pool.waiting() == 0);
  CHECK(r.pool.counts().timeouts == 0);
  if (burst) {
    CHECK(r.pool.counts().closed_on_checkin == 2);  // two came back to a queue the waiters had not emptied
    CHECK(r.pool.counts().open == 4);
    // The burst counters: one turn of six check-ins, two of them past pool_size.
    CHECK(r.pool.counts().checkin_turns == 1);
    CHECK(r.pool.counts().burst_checkins == 2);
    CHECK(r.pool.counts().burst_max == 6);
  } else {
    CHECK(r.pool.counts().closed_on_checkin == 0);
    CHECK(r.pool.counts().open == 6);
    CHECK(r.pool.counts().checkin_turns == 6);
    CHECK(r.pool.counts().burst_checkins == 0);
    CHECK(r.pool.counts().burst_max == 1);
  }
  r.checkout(4);  // the requests come back for their next query
  r.run_until_held(6);
  CHECK(r.pool.counts().opened == (burst ? 8u : 6u));
}

TEST_CASE("queue pool: waiters are served in the order they asked, each by the next check-in", "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool FIFO");
  Rig r(opts(1, 0));
  r.checkout(1);
  r.run_until_held(1);
  std::vector<int> order;
  for (int who = 1; who <= 3; ++who) {
    r.pool.checkout([&, who](Conn c, std::string) {
      order.push_back(who);
      r.held.push_back(std::move(c));
    });
  }
  CHECK(r.pool.waiting() == 3);
  for (std::size_t served = 1; served <= 3; ++served) {
    r.pool.checkin(std::move(r.held.back()));  // the one connection goes round
    r.held.pop_back();
    r.loop.run_until([&] { return order.size() == served; });
  }
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(r.pool.counts().waits == 3);
  CHECK(r.pool.counts().timeouts == 0);
}

TEST_CASE(
    "queue pool: a checkout made after a check-in woke a waiter, before the waiter ran, does not take the "
    "waiter's connection",
    "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool reserved connection");
  Rig r(opts(1, 0));
  r.checkout(1);
  r.run_until_held(1);
  std::vector<std::string> order;
  r.pool.checkout([&](Conn c, std::string) {
    order.push_back("waiter");
    r.held.push_back(std::move(c));
  });
  r.pool.checkin(std::move(r.held.front()));  // wakes the waiter; it runs later in the loop
  r.held.clear();
  r.pool.checkout([&](Conn c, std::string) {
    order.push_back("latecomer");
    r.held.push_back(std::move(c));
  });
  CHECK(order.empty());  // the latecomer was not served from the queue at once
  r.run_until_held(1);
  CHECK(order == std::vector<std::string>{"waiter"});
  r.pool.checkin(std::move(r.held.front()));
  r.held.clear();
  r.run_until_held(1);
  CHECK(order == std::vector<std::string>{"waiter", "latecomer"});
}

TEST_CASE("queue pool: a checkout that waits past the timeout gets an error and leaves the queue",
          "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool timeout");
  Rig r(opts(1, 0, 30ms));
  r.checkout(1);
  r.run_until_held(1);
  const auto t0 = EventLoop::Clock::now();
  r.checkout(1);
  r.loop.run_until([&] { return !r.errors.empty(); });
  CHECK(EventLoop::Clock::now() - t0 >= 30ms);
  CHECK(r.errors.front().find("timed out") != std::string::npos);
  CHECK(r.pool.counts().timeouts == 1);
  CHECK(r.pool.waiting() == 0);
  // A later check-in has nobody to serve: the connection goes to the idle queue.
  r.pool.checkin(std::move(r.held.front()));
  CHECK(r.pool.counts().idle == 1);
}

TEST_CASE("queue pool: a waiter served by a check-in never also times out, even when both fall due in one turn",
          "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool served waiter");
  Rig r(opts(1, 0, 30ms));
  r.checkout(1);
  r.run_until_held(1);
  int served = 0;
  int errors = 0;
  r.pool.checkout([&](Conn c, std::string) { (c ? served : errors) += 1; });
  // The check-in's timer (10 ms) and the waiter's timeout (30 ms) both fall due while the
  // loop is held up for 50 ms, so one turn moves both to the ready queue, check-in first.
  r.loop.call_later(10ms, [&] { r.pool.checkin(std::move(r.held.front())); });
  r.loop.call_soon([] { std::this_thread::sleep_for(50ms); });
  bool waited = false;
  r.loop.call_later(100ms, [&] { waited = true; });
  r.loop.run_until([&] { return waited; });
  CHECK(served == 1);
  CHECK(errors == 0);
  CHECK(r.pool.counts().timeouts == 0);
  CHECK(r.loop.timers_held() == 0);  // the waiter's timer is gone, not left to fire
}

TEST_CASE("queue pool: a connection checked in unusable is closed, and its slot goes to the first waiter",
          "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool broken check-in");
  Rig r(opts(1, 0));
  r.checkout(1);
  r.run_until_held(1);
  Conn broken = std::move(r.held.front());
  r.held.clear();
  broken->ok = false;
  r.checkout(1);  // waits: the one slot is taken
  r.pool.checkin(std::move(broken));
  CHECK(r.pool.counts().closed_broken == 1);
  CHECK(r.closes == 1);
  r.run_until_held(1);
  CHECK(r.pool.counts().opened == 2);
  CHECK(r.pool.counts().open == 1);

  r.held.front()->ok = false;  // nobody waits now: the slot is freed
  r.pool.checkin(std::move(r.held.front()));
  r.held.clear();
  CHECK(r.pool.counts().open == 0);
  CHECK(r.pool.counts().idle == 0);
}

TEST_CASE("queue pool: a waiter withdrawn right after a broken check-in costs no connect", "[queue_pool][ch04]") {
  // The drain deadline's shape: cancel_all destroys a coroutine holding a lease
  // with a query in flight (its connection checks in unusable), then the coroutine waiting
  // behind it (which withdraws its checkout), and the loop never turns again.
  Watchdog dog(10s, "queue pool broken check-in, waiter withdrawn");
  Rig r(opts(1, 0));
  r.checkout(1);
  r.run_until_held(1);
  REQUIRE(r.connects == 1);
  Conn broken = std::move(r.held.front());
  r.held.clear();
  broken->ok = false;
  bool served = false;
  const Pool::Ticket waiter = r.pool.checkout([&](Conn, std::string) { served = true; });
  r.pool.checkin(std::move(broken));
  CHECK(r.connects == 1);          // no connect started from inside the check-in
  CHECK(r.pool.withdraw(waiter));  // the waiter still waited: it leaves
  for (int i = 0; i < 3; ++i) r.loop.run_once(0);
  CHECK(r.connects == 1);            // and nobody opens for it
  CHECK(r.pool.counts().open == 0);  // its slot is free
  CHECK_FALSE(served);
}

TEST_CASE("queue pool: a failed open hands its error to the checkout and frees its slot", "[queue_pool][ch04]") {
  Watchdog dog(10s, "queue pool failed open");
  Rig r(opts(1, 0));
  r.fail_opens = 1;
  r.checkout(1);
  r.loop.run_until([&] { return !r.errors.empty(); });
  CHECK(r.errors.front() == "refused");
  CHECK(r.pool.counts().open_failures == 1);
  CHECK(r.pool.counts().open == 0);
  r.checkout(1);  // the slot is free again
  r.run_until_held(1);
  CHECK(r.pool.counts().opened == 1);
}
