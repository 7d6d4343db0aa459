// exercises/05-starved-waiter/tests: seed 004's starvation made deterministic, as in
// code/stack/tests/stack_lock_test.cpp. A sleeper waits on the lock; each round a releaser
// holds it, unlocks (waking the sleeper) and at once re-takes it with try_lock, as a worker
// spinning on its core does. A hook holds the woken sleeper until the releaser has re-taken
// the lock or handed it over: the order seed 004 saw by nature (a woken thread needs
// microseconds to be back on a core, a spinning one re-takes within nanoseconds). Every wait
// is bounded; a hang is a watchdog's failure.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "stats/thread_cpu.h"
#include "testkit/watchdog.h"
#include "tiny_lock.h"

using exercise::TinyLock;
using exercise::TinyLockPoint;
using handoff::testkit::Watchdog;
using namespace std::chrono_literals;

namespace {

thread_local bool t_is_sleeper = false;

/// Counts the sleeper's sleeps (and hand-off requests); holds it, once woken, until the
/// releaser has re-taken the lock or handed it over for that round.
class StarvationGate : public exercise::TinyLockHooks {
 public:
  void at(TinyLockPoint p) noexcept override {
    if (!t_is_sleeper) return;
    if (p == TinyLockPoint::before_sleep || p == TinyLockPoint::handoff_requested) sleeps.fetch_add(1);
    if (p == TinyLockPoint::woken) {
      const int round = sleeps.load();
      while (released.load() < round) std::this_thread::yield();
    }
  }
  std::atomic<int> sleeps{0};
  std::atomic<int> released{0};
};

/// try_lock until it works or `limit` passes.
bool retake_within(TinyLock& lock, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!lock.try_lock()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

struct Run {
  int rounds_run = 0;       ///< rounds the releaser completed
  int sleeper_got_it = -1;  ///< the round in which the sleeper held the lock (-1: not during the rounds)
  int handed_at = -1;       ///< the round whose unlock said it handed the lock over
  bool barged = false;      ///< the releaser's try_lock won right after its own hand-off
  bool stuck = false;       ///< after a hand-off the lock never came free again (2 s)
  bool overlap = false;     ///< two threads inside at once
  bool sleeper_handed = false;
  std::int64_t sleeper_wait_ns = 0;
  std::uint64_t requests = 0, handoffs = 0;
};

Run run_starvation(std::int64_t handoff_after_ns, int rounds, std::chrono::microseconds hold) {
  StarvationGate gate;
  TinyLock lock(handoff_after_ns, &gate);
  Run run;
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::atomic<bool> sleeper_holds{false};
  std::atomic<bool> sleeper_done{false};
  std::atomic<int> got_round{-1};
  REQUIRE(lock.try_lock());
  inside.fetch_add(1);
  std::thread sleeper([&] {
    t_is_sleeper = true;
    const std::int64_t start = handoff::stats::monotonic_ns();
    const auto got = lock.lock();
    if (inside.fetch_add(1) != 0) overlap.store(true);
    run.sleeper_wait_ns = handoff::stats::monotonic_ns() - start;
    run.sleeper_handed = got.handed;
    got_round.store(gate.released.load());  // the round whose unlock let it in
    sleeper_holds.store(true);
    inside.fetch_sub(1);
    lock.unlock();
    sleeper_done.store(true);
  });
  bool holding = true;
  for (int r = 1; r <= rounds; ++r) {
    // The sleeper is asleep (or asking); or it has been and gone, beside a barging releaser.
    while (gate.sleeps.load() < r && !sleeper_done.load()) std::this_thread::yield();
    if (sleeper_done.load()) break;
    std::this_thread::sleep_for(hold);
    inside.fetch_sub(1);
    holding = false;
    const auto unlocked = lock.unlock();
    if (unlocked.handed_off) {
      if (run.handed_at < 0) run.handed_at = r;
      // The lock is the requester's now: a spinner's try_lock must fail, even at once.
      if (lock.try_lock()) {
        run.barged = true;
        holding = true;
        if (inside.fetch_add(1) != 0) overlap.store(true);
      }
      gate.released.store(r);  // let the requester go
      if (!holding) {
        if (!retake_within(lock, 2000ms)) {
          run.stuck = true;
          break;
        }
        holding = true;
        if (inside.fetch_add(1) != 0) overlap.store(true);
      }
    } else {
      // The spinning worker's re-take: at once, before the woken sleeper is back.
      if (!retake_within(lock, 2000ms)) {
        run.stuck = true;
        break;
      }
      holding = true;
      if (inside.fetch_add(1) != 0) overlap.store(true);
      gate.released.store(r);
    }
    run.rounds_run = r;
    if (sleeper_holds.load()) break;
  }
  gate.released.store(rounds + 1);  // let a held sleeper go
  if (holding) {
    inside.fetch_sub(1);
    lock.unlock();
  }
  sleeper.join();
  if (got_round.load() >= 1 && got_round.load() <= rounds) run.sleeper_got_it = got_round.load();
  run.overlap = overlap.load();
  run.requests = lock.handoff_requests();
  run.handoffs = lock.handoffs();
  return run;
}

}  // namespace

TEST_CASE(
    "starved-waiter: past the bound, the unlock hands the lock to the sleeper instead of letting the spinner re-take "
    "it",
    "[starved-waiter][ch05]") {
  Watchdog dog(20s, "the starved sleeper, with a 2 ms bound");
  constexpr int kRounds = 40;
  // Each round lasts at least 500 us, so the sleeper has slept past 2 ms by round 5 at the
  // latest, asks, and the next unlock must hand it the lock.
  const Run run = run_starvation(2'000'000, kRounds, 500us);
  INFO("sleeper waited " << run.sleeper_wait_ns / 1000 << " us; got the lock in round " << run.sleeper_got_it
                         << "; requests " << run.requests << ", hand-offs " << run.handoffs);
  CHECK_FALSE(run.barged);  // the hand-off kept LOCKED: the spinner could not get in
  CHECK_FALSE(run.overlap);
  CHECK_FALSE(run.stuck);  // after the requester's unlock the lock came free
  CHECK(run.sleeper_handed);
  CHECK(run.sleeper_got_it >= 1);
  CHECK(run.sleeper_got_it <= 6);
  CHECK(run.handed_at == run.sleeper_got_it);
  CHECK(run.requests == 1);  // served the first time it asked
  CHECK(run.handoffs == 1);  // and no unlock handed over to nobody
  CHECK(run.sleeper_wait_ns >= 2'000'000);
}

TEST_CASE("starved-waiter: without a bound the lock is Onload's: the sleeper loses every round, nothing is handed over",
          "[starved-waiter][ch05]") {
  Watchdog dog(20s, "the starved sleeper, no hand-off");
  constexpr int kRounds = 40;
  const Run run = run_starvation(0, kRounds, 500us);
  CHECK(run.rounds_run == kRounds);
  CHECK(run.sleeper_got_it == -1);
  CHECK_FALSE(run.stuck);
  CHECK_FALSE(run.overlap);
  CHECK(run.handed_at == -1);
  CHECK(run.handoffs == 0);
}

// The next two are a second opinion under ThreadSanitizer (the tsan preset): on x86 a relaxed
// CAS is the same locked instruction as a release one, so only a checker of the C++ memory
// model sees that a critical section's plain write is not ordered before the next holder's
// read. The grader of that ordering is the model (model/tiny_lock_model.cpp): TSan does not
// model a standalone fence, and would fail a correct unlock written with one. Every flag the tests poll is relaxed, so
// the lock word is the only edge between the two threads once the waiter has started.
namespace {

struct Passed {
  bool waiting = false;  ///< the waiter showed `waiting_bits` in the word within 5 s
  int seen = -1;         ///< what the waiter read in its critical section
  bool handed = false;   ///< the waiter's lock() said it was handed the lock
  exercise::TinyUnlockResult unlocked;
};

/// The holder takes the lock and starts a waiter; once the word shows `waiting_bits` (relaxed
/// polls, at most 5 s) it writes a plain variable inside its critical section and unlocks.
/// The waiter, once it holds the lock, reads it.
Passed pass_through(std::int64_t handoff_after_ns, std::uint32_t waiting_bits) {
  TinyLock lock(handoff_after_ns);
  REQUIRE(lock.try_lock());
  int guarded = 0;  // plain: written by the holder, read by the next holder
  Passed p;
  std::thread waiter([&] {
    const auto got = lock.lock();  // its acquire CAS pairs with the unlock's release
    p.seen = guarded;
    p.handed = got.handed;
    lock.unlock();
  });
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while ((lock.word() & waiting_bits) != waiting_bits && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  p.waiting = (lock.word() & waiting_bits) == waiting_bits;
  guarded = 42;
  p.unlocked = lock.unlock();
  waiter.join();
  return p;
}

}  // namespace

TEST_CASE("starved-waiter: an unlock that releases publishes its critical section to the woken sleeper",
          "[starved-waiter][ch05]") {
  Watchdog dog(10s, "a plain release handing data to a sleeper");
  const Passed p = pass_through(0, TinyLock::kLocked | TinyLock::kNeedWake);
  CHECK(p.waiting);
  CHECK(p.unlocked.woke);
  CHECK_FALSE(p.handed);
  CHECK(p.seen == 42);
}

TEST_CASE("starved-waiter: an unlock that hands off publishes its critical section to the requester",
          "[starved-waiter][ch05]") {
  Watchdog dog(10s, "a hand-off handing data to the requester");
  // A 1 ms bound: the sleeper wakes from its first sleep past it, finds the lock still held,
  // and asks.
  const Passed p = pass_through(1'000'000, TinyLock::kLocked | TinyLock::kHandoffWanted);
  CHECK(p.waiting);
  CHECK(p.unlocked.handed_off);
  CHECK(p.handed);
  CHECK(p.seen == 42);
}

TEST_CASE("starved-waiter: four threads, a 50 us bound: one inside at a time, and every lock taken",
          "[starved-waiter][ch05]") {
  Watchdog dog(20s, "four threads on the lock with hand-offs");
  TinyLock lock(50'000);
  std::uint64_t plain = 0;  // a race, and a wrong total, if two get in at once
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  std::atomic<int> taken{0};
  constexpr int kThreads = 4, kEach = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        lock.lock();
        if (inside.fetch_add(1) != 0) overlap.store(true);
        ++plain;
        if (i % 16 == 0) std::this_thread::sleep_for(20us);  // now and then a long hold
        inside.fetch_sub(1);
        lock.unlock();
        taken.fetch_add(1);
      }
    });
  }
  // A lock nobody has taken for 2 s is stuck (a whole run takes a fraction of a second):
  // fail at once, as the watchdog would, rather than wait out its 20 s.
  int last = -1;
  auto last_change = std::chrono::steady_clock::now();
  while (taken.load() < kThreads * kEach) {
    std::this_thread::sleep_for(10ms);
    const int now = taken.load();
    if (now != last) {
      last = now;
      last_change = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_change > 2s) {
      std::fprintf(stderr, "watchdog: the lock was stuck: no lock taken for 2 s, %d of %d taken (word %#x)\n", now,
                   kThreads * kEach, lock.word());
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
  for (auto& t : threads) t.join();
  INFO("hand-offs " << lock.handoffs() << " of " << lock.handoff_requests() << " requests");
  CHECK_FALSE(overlap.load());
  CHECK(plain == std::uint64_t{kThreads} * kEach);
  CHECK((lock.word() & TinyLock::kLocked) == 0);
}
