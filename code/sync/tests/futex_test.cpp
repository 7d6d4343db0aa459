// sync/tests/futex_test: the futex calls keep their one promise (chapter 03; issue 26): a
// wait on a word that no longer holds the value seen returns at once, a timed wait ends by
// itself, and a wake after a change of the word ends a sleeper's wait. Bounded by a
// watchdog: a lost wake is a failure with a message, not a hung test.
#include "sync/futex.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "testkit/watchdog.h"

using handoff::sync::futex_wait;
using handoff::sync::futex_wake_one;
using namespace std::chrono_literals;

TEST_CASE("futex: a wait on a word that has changed returns at once", "[unit][ch03]") {
  handoff::testkit::Watchdog dog(10s, "futex_wait on a changed word");
  std::atomic<std::uint32_t> word{1};
  futex_wait(word, 0);  // the word holds 1, not 0: no sleep (no timeout: a sleep would hang)
  CHECK(word.load() == 1);
}

TEST_CASE("futex: a timed wait that nobody wakes ends by itself", "[unit][ch03]") {
  handoff::testkit::Watchdog dog(10s, "a timed futex_wait");
  std::atomic<std::uint32_t> word{0};
  futex_wait(word, 0, 1'000'000);  // 1 ms; a spurious return ends it sooner, which is allowed
  CHECK(word.load() == 0);
}

TEST_CASE("futex: a change of the word and a wake end a sleeper's wait", "[unit][ch03]") {
  handoff::testkit::Watchdog dog(10s, "a sleeper woken by futex_wake_one");
  std::atomic<std::uint32_t> word{0};
  std::thread sleeper([&] {
    // seq_cst loads and stores here: the test asks only that the wake is not lost.
    while (word.load() == 0) futex_wait(word, 0);
  });
  std::this_thread::sleep_for(10ms);  // most often asleep by now; either way it must end
  word.store(1);
  futex_wake_one(word);
  sleeper.join();
  CHECK(word.load() == 1);
}
