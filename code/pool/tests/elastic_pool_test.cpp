// pool/tests/elastic_pool_test: the chapter 03 pool's four rules, each shown doing its job
// and, where it can be switched off, failing without it: one wake per burst into a parked
// lane, none beside a running or spinning thread, the loop's age check (and its negative
// control), a fast job behind two long ones, the park's window forced (and the broken order
// that sleeps through it), and the lost-wakeup stress (chapter 03). Every wait is bounded.
// Changed in chapter 04: the idle spinner's backoff.
#include <atomic>
#include <catch2/catch.hpp>

#include "pool/elastic_pool.h"
#include "testkit/pool_rig.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace handoff::pool::testing;
using Clock = std::chrono::steady_clock;
using Kind = sync::WakeChannel::Kind;

namespace {

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 2s) {
  const auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50us);
  }
  return true;
}

pool::ElasticPoolOptions options(std::int64_t spin_ns = 0, bool age_check = true) {
  pool::ElasticPoolOptions o;
  o.spin.spin_ns = spin_ns;  // yielding after the default 2 µs: a long spin shares the core
  o.age_check = age_check;
  return o;
}

// A handler that holds its thread until the test lets it go (or 3 s pass). Namespace-scope,
// with its flags, as datagram_pool_test's: relaxed (all), test flags polled in bounded loops.
std::atomic<int> g_held{0};
std::atomic<bool> g_let_go{false};
const http::Handler kHold = [](const http::Request&, http::Responder& out) {
  g_held.fetch_add(1, std::memory_order_relaxed);
  eventually([] { return g_let_go.load(std::memory_order_relaxed); }, 3s);
  out.send(http::Response{200, "text/plain", {}, "held"});
};
void reset_hold() {
  g_held = 0;
  g_let_go = false;
}

std::uint64_t loop_count(Rig<pool::ElasticPool>& rig, stats::Counter c) { return rig.loop_stats.get(c); }

}  // namespace

TEST_CASE("elastic pool: a burst of 16 into a fully parked pool sends exactly one wake", "[pool][ch03]") {
  testkit::Watchdog dog(20s, "a burst of 16 into 4 parked threads");
  // Rule 2 alone (no age check): once woken, the thread spins far longer than the burst
  // takes to push, so it takes the whole burst, however the threads are scheduled. Fails if
  // the wake left the parked count for the next push to see: each push would wake another.
  Rig<pool::ElasticPool> rig(4, options(500'000'000, false));
  REQUIRE(eventually([&] { return rig.pool.parked() == 4; }, 5s));
  for (std::uint64_t i = 0; i < 16; ++i) rig.pool.submit(make_job(i, kWhole));
  CHECK(rig.pool.parked() == 3);  // lowered by the wake itself, before the next push looked
  REQUIRE(rig.run_until(16));
  CHECK(loop_count(rig, stats::Counter::wakes_sent) == 1);
  rig.pool.stop(kNoDeadline);
}

TEST_CASE("elastic pool: one thread spins idle, its sibling parks, and pushes beside the spinner wake nobody",
          "[pool][ch03]") {
  testkit::Watchdog dog(20s, "pushes into a spinning thread");
  // A spin far longer than the test. Rule 1: of two idle threads one spins, one parks.
  // Rule 2: a spinning thread takes what comes, so no push may wake the parked one.
  Rig<pool::ElasticPool> rig(2, options(5'000'000'000, false));
  // The count rises just before the state word says PARKED (park() counts, then announces),
  // so wait for the states themselves, not only the count.
  const auto one_spins_one_parks = [&] {
    const Kind a = rig.pool.thread_state(0), b = rig.pool.thread_state(1);
    return (a == Kind::spinning && b == Kind::parked) || (a == Kind::parked && b == Kind::spinning);
  };
  REQUIRE(eventually([&] { return rig.pool.parked() == 1 && one_spins_one_parks(); }, 5s));
  const int spinner = rig.pool.thread_state(0) == Kind::spinning ? 0 : 1;
  CHECK(rig.pool.thread_state(spinner) == Kind::spinning);
  CHECK(rig.pool.thread_state(1 - spinner) == Kind::parked);
  for (std::uint64_t i = 0; i < 20; ++i) {
    rig.pool.submit(make_job(i, kWhole));
    REQUIRE(rig.run_until(i + 1));
  }
  CHECK(loop_count(rig, stats::Counter::wakes_sent) == 0);
  CHECK(rig.pool.parked() == 1);
  rig.pool.stop(kNoDeadline);                                 // joins: the threads' counters are final
  CHECK(rig.pool_counter(stats::Counter::parks) == 1);        // the sibling parked once, at the start
  CHECK(rig.pool_counter(stats::Counter::spin_catches) > 0);  // the rest it found at once, back from a job
}

TEST_CASE("elastic pool: with the spin backoff, the idle period after a missed spin parks at once", "[pool][ch04]") {
  testkit::Watchdog dog(20s, "a spin skipped after a miss");
  // One thread, a 2 s spin: its first idle spin misses (nothing is submitted), so with the
  // backoff (chapter 04, sync/spin_backoff) the idle period after the next job skips its
  // spin and parks at once. Without it the thread would spin 2 s there, past the bound.
  pool::ElasticPoolOptions o = options(2'000'000'000, false);
  o.spin_backoff = true;
  Rig<pool::ElasticPool> rig(1, o);
  REQUIRE(eventually([&] { return rig.pool.parked() == 1; }, 5s));  // after the first, missed spin
  rig.pool.submit(make_job(0, kWhole));
  REQUIRE(rig.run_until(1));
  CHECK(eventually([&] { return rig.pool.parked() == 1; }, 1s));
  rig.pool.stop(kNoDeadline);
}

TEST_CASE("elastic pool: a push beside a running thread wakes nobody, and the running thread takes it",
          "[pool][ch03]") {
  testkit::Watchdog dog(20s, "a push beside a held thread");
  reset_hold();
  // No spin and no age check: rule 2 alone. One thread is held in a handler, one parked.
  Rig<pool::ElasticPool> rig(2, options(0, false));
  REQUIRE(eventually([&] { return rig.pool.parked() == 2; }, 5s));
  rig.pool.submit(make_job(0, kHold));  // every thread parked: one wake
  REQUIRE(eventually([] { return g_held.load() == 1; }));
  rig.pool.submit(make_job(1, kWhole));  // a thread is running: it will come back for this
  rig.turn_until([] { return false; }, 100ms);
  CHECK(rig.sink.ends == 0);  // no thread was woken for it
  CHECK(loop_count(rig, stats::Counter::wakes_sent) == 1);
  CHECK(rig.pool.parked() == 1);
  g_let_go = true;
  REQUIRE(rig.run_until(2, 5s));  // the held thread, let go, takes the second job
  CHECK(loop_count(rig, stats::Counter::wakes_sent) == 1);
  rig.pool.stop(kNoDeadline);
}

namespace {

/// Two of four threads held in long handlers (the seed's two 1.5 s views), then a fast job.
/// Returns whether the fast job was answered within `bound`, the loop passes waiting up to
/// a second each, as an idle server's would.
bool fast_job_behind_held_ones(const pool::ElasticPoolOptions& o, int held, std::chrono::milliseconds bound) {
  reset_hold();
  Rig<pool::ElasticPool> rig(4, o);
  REQUIRE(eventually([&] { return rig.pool.parked() == 4; }, 5s));
  for (int i = 0; i < held; ++i) rig.pool.submit(make_job(static_cast<std::uint64_t>(i), kHold));
  REQUIRE(rig.turn_until([&] { return g_held.load() == held; }, 3s, 1000));
  const auto fast = static_cast<std::uint64_t>(held);
  rig.pool.submit(make_job(fast, kWhole));
  const bool prompt = rig.turn_until([&] { return rig.sink.kinds.count(fast) == 1; }, bound, 1000);
  g_let_go = true;
  REQUIRE(rig.run_until(static_cast<std::size_t>(held) + 1, 5s));
  rig.pool.stop(kNoDeadline);
  return prompt;
}

}  // namespace

TEST_CASE("elastic pool: a fast job behind two held threads of four is answered promptly", "[pool][ch03]") {
  testkit::Watchdog dog(30s, "fast jobs behind held ones");
  // The second held job and the fast one each find a thread running and the others parked:
  // submit wakes nobody (rule 2), and the loop's age check (rule 3) starts a parked thread
  // once the ring's pops have stood still past T. Fails if the age check does not wake, or
  // if the loop's wait is not capped while jobs wait (the passes here may wait 1000 ms).
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    CHECK(fast_job_behind_held_ones(options(), 2, 250ms));
  }
}

TEST_CASE("elastic pool: negative control, without the age check a fast job waits behind a held thread",
          "[pool][ch03]") {
  testkit::Watchdog dog(30s, "a fast job behind a held one, no age check");
  // One held thread, three parked, no age check: the fast job waits for the held one.
  CHECK_FALSE(fast_job_behind_held_ones(options(0, false), 1, 500ms));
}

namespace {

/// A job pushed into an all-parked pool whose submit is forbidden to wake (the forced
/// situation): returns whether it was answered within `bound`, and the age wakes counted.
bool unwoken_job_answered(bool age_check, std::chrono::milliseconds bound, std::uint64_t& age_wakes) {
  pool::ElasticPoolSeams t;
  t.submit_wakes = false;
  Rig<pool::ElasticPool> rig(2, options(0, age_check), t);
  REQUIRE(eventually([&] { return rig.pool.parked() == 2; }, 5s));
  rig.pool.submit(make_job(0, kWhole));
  const bool answered = rig.turn_until([&] { return rig.sink.ends == 1; }, bound, 1000);
  age_wakes = loop_count(rig, stats::Counter::age_wakes);
  rig.pool.stop(kNoDeadline);  // wakes every thread: the job is run if it was not
  CHECK(rig.sink.ends == 1);
  return answered;
}

}  // namespace

TEST_CASE("elastic pool: the age check wakes a parked thread for a job left in the ring past T", "[pool][ch03]") {
  testkit::Watchdog dog(20s, "a job nobody was woken for");
  std::uint64_t age_wakes = 0;
  CHECK(unwoken_job_answered(true, 250ms, age_wakes));
  CHECK(age_wakes >= 1);  // one, or another T later if the woken thread was slow to pop
}

TEST_CASE("elastic pool: negative control, without the age check a job nobody was woken for waits", "[pool][ch03]") {
  testkit::Watchdog dog(20s, "a job nobody was woken for, no age check");
  std::uint64_t age_wakes = 0;
  CHECK_FALSE(unwoken_job_answered(false, 300ms, age_wakes));
  CHECK(age_wakes == 0);
}

namespace {

enum class Pace { after_park, back_to_back };

/// The lost-wakeup test: `rounds` jobs to `threads` threads, each completion bounded by
/// `bound`, with no age check (it would cover a lost wake within T: only the park/submit
/// protocol is under test). Returns the rounds that missed their bound (stopping at the
/// first; stop() then wakes every thread, so a lost wake is a result, not a hang). What it
/// does not catch: the park's fence taken out. On x86 the parked count's locked fetch_add
/// drains the stores before it, and what is left (the word's announcement, one store, late
/// past the ring's load) is a window this test does not aim at. The relaxed-memory model
/// covers it: "elastic pool model: a park without its fence between announcing and
/// re-checking is refuted" (code/relacy/elastic_pool_model.cpp, the same ElasticPark).
int lost_wakeups(int threads, Pace pace, int rounds, std::chrono::milliseconds bound) {
  Rig<pool::ElasticPool> rig(threads, options(0, false));
  for (int i = 0; i < rounds; ++i) {
    if (pace == Pace::after_park) {  // every thread has parked before each submit
      if (!eventually([&] { return rig.pool.parked() == threads; })) return rounds - i;
      std::this_thread::sleep_for(200us);
    }
    rig.pool.submit(make_job(static_cast<std::uint64_t>(i), kWhole));
    if (!rig.run_until(static_cast<std::size_t>(i) + 1, bound)) {
      rig.pool.stop(kNoDeadline);
      return rounds - i;
    }
  }
  rig.pool.stop(kNoDeadline);
  return 0;
}

}  // namespace

TEST_CASE("elastic pool: lost-wakeup test, 200 jobs each submitted after every thread parked", "[pool][ch03]") {
  testkit::Watchdog dog(60s, "200 park/submit rounds, 1 and 3 threads");
  CHECK(lost_wakeups(1, Pace::after_park, 200, 2s) == 0);
  CHECK(lost_wakeups(3, Pace::after_park, 200, 2s) == 0);
}

TEST_CASE("elastic pool: lost-wakeup test, no pause between submits", "[pool][ch03]") {
  testkit::Watchdog dog(60s, "back-to-back rounds, 1 and 3 threads");
  CHECK(lost_wakeups(1, Pace::back_to_back, 500, 2s) == 0);
  CHECK(lost_wakeups(3, Pace::back_to_back, 500, 2s) == 0);
}

TEST_CASE("elastic pool: a wake that races the thread's own re-check is owned once, and the count stays true",
          "[pool][ch03]") {
  testkit::Watchdog dog(30s, "20 wakes raced against the re-check");
  // The parking thread is held between its announcement and its re-check while the loop
  // pushes a job: the loop sees every thread parked and wakes it (CAS to WOKEN, count
  // lowered); the thread's re-check then finds the job and its own CAS fails. Fails if both
  // sides lowered the count (it would read 0 with the thread parked again, and rule 2 would
  // never wake it for the next job: the next round misses its bound) or neither did.
  std::atomic<bool> hold{false}, held{false}, go{false};
  std::atomic<std::uint64_t> passes{0};  // parks that reached the hook
  pool::ElasticPoolSeams t;
  t.between_park_steps = [&] {
    // relaxed (all): test flags polled in bounded loops.
    passes.fetch_add(1, std::memory_order_relaxed);
    if (!hold.exchange(false, std::memory_order_relaxed)) return;
    held.store(true, std::memory_order_relaxed);
    eventually([&] { return go.exchange(false, std::memory_order_relaxed); }, 5s);
  };
  Rig<pool::ElasticPool> rig(1, options(0, false), t);
  REQUIRE(eventually([&] { return rig.pool.parked() == 1; }));
  for (std::uint64_t i = 0; i < 20; ++i) {
    INFO("round " << i);
    // The parked count rises before the thread reaches the hook (park() counts, announces,
    // then calls it): wait until its latest park has passed the hook (one park to start, two
    // a round), or `hold` would catch this park instead of the next and keep the thread from
    // the job below until `go`.
    REQUIRE(eventually([&] { return passes.load(std::memory_order_relaxed) >= 1 + 2 * i; }));
    hold = true;
    rig.pool.submit(make_job(1000 + i, kWhole));  // wakes the parked thread; it parks again
    REQUIRE(rig.run_until(2 * i + 1, 2s));
    REQUIRE(eventually([&] { return held.exchange(false); }));  // held inside its next park
    rig.pool.submit(make_job(i, kWhole));                       // every thread counted parked: a wake
    CHECK(rig.pool.parked() == 0);
    go = true;  // the re-check finds the job; the CAS there fails
    REQUIRE(rig.run_until(2 * i + 2, 2s));
    REQUIRE(eventually([&] { return rig.pool.parked() == 1; }));
    CHECK(loop_count(rig, stats::Counter::wakes_sent) == 2 * i + 2);
  }
  rig.pool.stop(kNoDeadline);
}

namespace {

/// The park's window, forced: one thread, held between its two park steps while the loop
/// submits a job, then let go. Whether the job is answered within `bound`, with the age
/// check off (it would rescue a lost wake T later, and this test is about the park alone).
bool job_in_park_window_answered(pool::ElasticPoolSeams::ParkOrder order, std::chrono::milliseconds bound) {
  std::atomic<bool> armed{true}, held{false}, go{false};
  pool::ElasticPoolSeams t;
  t.park_order = order;
  t.between_park_steps = [&] {
    // relaxed (all): test flags polled in bounded loops.
    if (!armed.exchange(false, std::memory_order_relaxed)) return;
    held.store(true, std::memory_order_relaxed);
    eventually([&] { return go.load(std::memory_order_relaxed); }, 5s);
  };
  Rig<pool::ElasticPool> rig(1, options(0, false), t);
  REQUIRE(eventually([&] { return held.load(); }, 5s));
  rig.pool.submit(make_job(0, kWhole));  // inside the window
  go = true;
  const bool answered = rig.run_until(1, bound);
  rig.pool.stop(kNoDeadline);  // wakes a thread that slept through the job; it runs it
  CHECK(rig.sink.ends == 1);
  return answered;
}

}  // namespace

TEST_CASE("elastic pool: a job submitted inside the park's window is taken by the re-check", "[pool][ch03]") {
  testkit::Watchdog dog(30s, "the park's window, forced, three rounds");
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    CHECK(job_in_park_window_answered(pool::ElasticPoolSeams::ParkOrder::announce_then_recheck, 300ms));
  }
}

TEST_CASE("elastic pool: negative control, re-checking before announcing sleeps through a job in the window",
          "[pool][ch03]") {
  testkit::Watchdog dog(30s, "the park's window, forced, broken order");
  // The push reads parked = 0 (the thread has not announced yet): not every thread parked,
  // so no wake; the thread then announces and sleeps with the job in the ring.
  CHECK_FALSE(job_in_park_window_answered(pool::ElasticPoolSeams::ParkOrder::recheck_then_announce, 300ms));
}

TEST_CASE("elastic pool: the loop's wait is capped only while jobs wait and a thread is parked to wake",
          "[pool][ch03]") {
  testkit::Watchdog dog(20s, "the wait cap beside held and parked threads");
  reset_hold();
  SECTION("one thread, held in a handler: nobody to wake, so no cap (no timer armed)") {
    Rig<pool::ElasticPool> rig(1, options(0, true));
    REQUIRE(eventually([&] { return rig.pool.parked() == 1; }, 5s));
    rig.pool.submit(make_job(0, kHold));
    REQUIRE(eventually([] { return g_held.load() == 1; }));
    rig.pool.submit(make_job(1, kWhole));  // waits in the ring behind the held thread
    CHECK(rig.pool.max_wait_ms() == pool::HandlerPool::kNoWaitCap);
    g_let_go = true;
    REQUIRE(rig.run_until(2, 5s));
    rig.pool.stop(kNoDeadline);
  }
  SECTION("two threads, one held and one parked: the cap keeps the age check running") {
    Rig<pool::ElasticPool> rig(2, options(0, true));
    REQUIRE(eventually([&] { return rig.pool.parked() == 2; }, 5s));
    rig.pool.submit(make_job(0, kHold));
    REQUIRE(eventually([] { return g_held.load() == 1; }));
    REQUIRE(eventually([&] { return rig.pool.parked() == 1; }, 5s));
    rig.pool.submit(make_job(1, kWhole));  // not every thread parked: no wake from submit
    CHECK(rig.pool.max_wait_ms() == 1);
    REQUIRE(rig.run_until(1, 5s));  // the age check wakes the parked thread for it
    g_let_go = true;
    REQUIRE(rig.run_until(2, 5s));
    rig.pool.stop(kNoDeadline);
  }
}
