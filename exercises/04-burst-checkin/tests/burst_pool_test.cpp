// exercises/04-burst-checkin/tests: seed 003's burst (six check-ins in one turn with two
// waiters on a pool of 4 + 2), a burst with nobody waiting, the waiters' order and turn, and
// the seed's closed loop of 8 requests replayed for 1,000 requests.
#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "burst_pool.h"

using exercise::BurstPool;
using exercise::Conn;
using exercise::Turns;

namespace {

/// Check out `n` connections at once and return them (the pool must have them).
std::vector<Conn> take(BurstPool& pool, int n) {
  std::vector<Conn> got;
  for (int i = 0; i < n; ++i) pool.checkout([&](Conn c) { got.push_back(c); });
  REQUIRE(got.size() == static_cast<std::size_t>(n));
  return got;
}

/// Check `c` in, and hold the pool to its invariants right after: every promise has its
/// connection in the idle queue, no idle connection is free while a checkout waits, and the
/// idle connections nobody was promised are at most pool_size.
void checkin(BurstPool& pool, Conn c, std::size_t pool_size) {
  pool.checkin(c);
  INFO("after a check-in: " << pool.idle() << " idle, " << pool.reserved() << " of them promised to woken waiters, "
                            << pool.waiting() << " still waiting");
  {
    INFO("more waiters woken than connections in the idle queue: wake one waiter per connection kept");
    REQUIRE(pool.reserved() <= pool.idle());
  }
  {
    INFO("a free idle connection while a checkout waits: a check-in that keeps its connection while anyone "
         "waits wakes the first waiter (wake_first_waiter), which promises it the connection");
    REQUIRE((pool.waiting() == 0 || pool.idle() == pool.reserved()));
  }
  INFO("more than pool_size (" << pool_size
                               << ") idle connections nobody was promised: the cap holds for the free ones, "
                                  "idle() - reserved()");
  REQUIRE(pool.idle() - pool.reserved() <= pool_size);
}

}  // namespace

TEST_CASE("burst-checkin: six check-ins in one turn with two waiters close nothing, and the waiters get open connections",
          "[burst-checkin][ch04]") {
  Turns turns;
  BurstPool pool(turns, 4, 2);
  std::vector<Conn> busy = take(pool, 6);
  std::vector<Conn> served;
  for (int i = 0; i < 2; ++i) pool.checkout([&](Conn c) { served.push_back(c); });
  REQUIRE(pool.waiting() == 2);

  for (Conn c : busy) checkin(pool, c, 4);  // the burst: one turn, before any woken waiter runs
  {
    INFO("closed " << pool.counts().closed_on_checkin
                   << " of the burst's six connections: a connection promised to a woken waiter is not idle, "
                      "so it does not count against pool_size");
    CHECK(pool.counts().closed_on_checkin == 0);
  }
  {
    INFO(served.size() << " waiters ran inside the burst's check-ins: a woken waiter is promised its connection "
                          "and runs in a later turn (wake_first_waiter queues it), never inside a check-in");
    CHECK(served.empty());  // woken, not yet run
  }

  turns.run_turn();
  INFO(served.size() << " of the two waiting checkouts were served in the turn after the burst: a check-in that keeps "
                        "its connection while a checkout waits wakes the first waiter (wake_first_waiter)");
  REQUIRE(served.size() == 2);
  CHECK(std::set<Conn>(busy.begin(), busy.end()).count(served[0]) == 1);
  CHECK(std::set<Conn>(busy.begin(), busy.end()).count(served[1]) == 1);
  CHECK(pool.idle() == 4);
  CHECK(pool.open() == 6);
  CHECK(pool.counts().opened == 6);
}

TEST_CASE("burst-checkin: with nobody waiting, a burst keeps pool_size idle and closes the rest",
          "[burst-checkin][ch04]") {
  Turns turns;
  BurstPool pool(turns, 4, 2);
  for (Conn c : take(pool, 6)) checkin(pool, c, 4);
  INFO("with nobody waiting, the idle queue keeps pool_size (4) and the check-ins beyond it close their connection");
  CHECK(pool.idle() == 4);
  CHECK(pool.counts().closed_on_checkin == 2);
  CHECK(pool.open() == 4);
  CHECK(turns.idle());  // nobody to wake
}

TEST_CASE("burst-checkin: a woken waiter runs in a later turn, never inside the check-in, and waiters go in order",
          "[burst-checkin][ch04]") {
  Turns turns;
  BurstPool pool(turns, 1, 0);
  Conn only = take(pool, 1).front();
  std::vector<int> order;
  bool in_checkin = false;
  INFO("a woken waiter's callback is queued for a later turn (wake_first_waiter), never run inside the check-in; "
       "waiters are served first come, first served");
  for (int w = 0; w < 3; ++w) {
    pool.checkout([&, w](Conn c) {
      CHECK_FALSE(in_checkin);  // a waiter's code must not run inside another's check-in
      order.push_back(w);
      turns.call_soon([&pool, c] { checkin(pool, c, 1); });
    });
  }
  in_checkin = true;
  checkin(pool, only, 1);
  in_checkin = false;
  CHECK(order.empty());
  for (int turn = 0; turn < 10 && !turns.idle(); ++turn) turns.run_turn();
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(pool.counts().opened == 1);
  CHECK(pool.counts().closed_on_checkin == 0);
}

TEST_CASE("burst-checkin: seed 003's closed loop of 8 requests on 4 + 2, two queries each, opens no connection after the first six",
          "[burst-checkin][ch04]") {
  Turns turns;
  BurstPool pool(turns, 4, 2);
  constexpr int kRequests = 1000;
  int started = 0;
  int finished = 0;
  std::size_t most_free_idle = 0;
  std::uint64_t closed_under_load = 0;  // closes before the last request started
  std::function<void()> request = [&] {
    ++started;
    pool.checkout([&](Conn c) {
      // Two queries, a turn each (a reply arrives with the turn's poll), then the check-in
      // and the driver's next request, in the same callback: every connection that was busy
      // comes back in the same turn, the seed's burst.
      turns.call_soon([&, c] {
        turns.call_soon([&, c] {
          checkin(pool, c, 4);
          most_free_idle = std::max(most_free_idle, pool.idle() - pool.reserved());
          ++finished;
          if (started < kRequests) {
            closed_under_load = pool.counts().closed_on_checkin;
            request();
          }
        });
      });
    });
  };
  for (int i = 0; i < 8; ++i) request();
  for (int turn = 0; turn < 100000 && finished < kRequests; ++turn) turns.run_turn();
  REQUIRE(finished == kRequests);
  INFO("opened " << pool.counts().opened << " connections and closed " << closed_under_load
                 << " on check-in while requests kept coming, for " << kRequests << " requests");
  CHECK(pool.counts().opened == 6);
  CHECK(closed_under_load == 0);
  // Once the requests stop, the last burst finds nobody waiting: two of six are closed.
  CHECK(pool.counts().closed_on_checkin == 2);
  CHECK(most_free_idle <= 4);
}

TEST_CASE("burst-checkin: a burst with fewer waiters than check-ins keeps the promised connection and pool_size free ones",
          "[burst-checkin][ch04]") {
  Turns turns;
  BurstPool pool(turns, 4, 2);
  std::vector<Conn> busy = take(pool, 6);
  std::vector<Conn> served;
  pool.checkout([&](Conn c) { served.push_back(c); });
  REQUIRE(pool.waiting() == 1);
  for (Conn c : busy) checkin(pool, c, 4);  // the first wakes the waiter; the other five find nobody waiting
  INFO("closed " << pool.counts().closed_on_checkin
                 << " of six: one is promised to the woken waiter, four are kept free, the sixth is closed");
  CHECK(pool.counts().closed_on_checkin == 1);
  turns.run_turn();
  CHECK(served.size() == 1);
  CHECK(pool.idle() == 4);
  CHECK(pool.reserved() == 0);
}

TEST_CASE("burst-checkin: a load between pool_size and the limit keeps its connections, one check-in at a time",
          "[burst-checkin][ch04]") {
  Turns turns;
  BurstPool pool(turns, 4, 2);
  std::vector<Conn> busy = take(pool, 5);  // one above pool_size, below the limit of six
  for (int round = 0; round < 200; ++round) {
    const Conn c = busy.front();
    busy.erase(busy.begin());
    checkin(pool, c, 4);  // four still busy: the idle queue holds this one only
    for (Conn got : take(pool, 1)) busy.push_back(got);
  }
  INFO("opened " << pool.counts().opened << " and closed " << pool.counts().closed_on_checkin
                 << " in 200 check-ins under a steady load of five: the cap is on idle connections (at most "
                    "pool_size of them), not on the open ones, so a check-in into a near-empty idle queue keeps its "
                    "connection");
  CHECK(pool.counts().closed_on_checkin == 0);
  CHECK(pool.counts().opened == 5);
}
