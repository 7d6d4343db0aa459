// exercises/04-resolver-cancel/tests: cancelled lookups skipped before the lookup function,
// a cancel that comes too late answered as such, and lookups taken in the order asked. Every
// wait is bounded; the lookup function is a stand-in that blocks on a gate the test opens.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lookup_queue.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using exercise::LookupQueue;

namespace {

/// A lookup function that records every name it is given and, while the gate is shut,
/// blocks the first `hold` calls until the test opens it.
class GatedLookup {
 public:
  explicit GatedLookup(int hold) : hold_(hold) {}

  exercise::LookupFunction function() {
    return [this](const std::string& name) {
      std::unique_lock<std::mutex> g(m_);
      log_.push_back(name);
      if (static_cast<int>(log_.size()) <= hold_) {
        ++inside_;
        changed_.notify_all();
        changed_.wait_for(g, 10s, [this] { return open_; });
      }
      return "addr-of-" + name;
    };
  }
  /// Wait (at most 5 s) until `n` calls are blocked at the gate.
  bool wait_inside(int n) {
    std::unique_lock<std::mutex> g(m_);
    return changed_.wait_for(g, 5s, [&] { return inside_ >= n; });
  }
  void open() {
    std::lock_guard<std::mutex> g(m_);
    open_ = true;
    changed_.notify_all();
  }
  std::vector<std::string> log() {
    std::lock_guard<std::mutex> g(m_);
    return log_;
  }

 private:
  std::mutex m_;
  std::condition_variable changed_;
  std::vector<std::string> log_;
  int hold_;
  int inside_ = 0;
  bool open_ = false;
};

/// Answers, as the Done callbacks deliver them (on the queue's threads).
struct Answers {
  std::mutex m;
  std::vector<std::string> got;
  exercise::Done record() {
    return [this](std::string a) {
      std::lock_guard<std::mutex> g(m);
      got.push_back(std::move(a));
    };
  }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> g(m);
    return got;
  }
};

/// The property itself, as the queue's given thread loop observed each take(): every lookup
/// returned marked started, in the same hold of the lock in which its `cancelled` was read.
void check_one_step(const LookupQueue& q) {
  const exercise::QueueCounts c = q.counts();
  {
    INFO("take() returned " << c.taken_unmarked
                            << " lookups without setting `started`: a cancel() while such a "
                               "lookup runs says it stopped it");
    CHECK(c.taken_unmarked == 0);
  }
  {
    INFO("take() set `started` on " << c.marked_unchecked
                                    << " lookups without reading their `cancelled`: a "
                                       "cancelled lookup must never reach the lookup function");
    CHECK(c.marked_unchecked == 0);
  }
  {
    INFO("take() let the queue's lock go between reading a lookup's `cancelled` and setting its `started` ("
         << c.marked_apart << " of " << c.lookups_run
         << " lookups): a cancel() can land in between and say it stopped a lookup that then runs. The check and "
            "the mark are one step: do both in one hold of the lock");
    CHECK(c.marked_apart == 0);
  }
}

template <class Pred>
bool eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

}  // namespace

TEST_CASE(
    "resolver-cancel: a lookup cancelled while it waits never reaches the lookup function, and its callback never runs",
    "[resolver-cancel][ch04]") {
  handoff::testkit::Watchdog dog(20s, "cancelled lookups while queued");
  GatedLookup lookup(1);
  Answers answers;
  LookupQueue q(1, lookup.function());
  q.resolve("a", answers.record());
  REQUIRE(lookup.wait_inside(1));  // the one thread is busy with "a"
  auto b = q.resolve("b", answers.record());
  auto c = q.resolve("c", answers.record());
  q.resolve("d", answers.record());
  auto e = q.resolve("e", answers.record());
  CHECK(q.cancel(b));  // still queued: it will never run
  CHECK(q.cancel(c));  // two in a row
  CHECK(q.cancel(e));  // and the last one queued
  lookup.open();
  {
    INFO(
        "of 5 lookups asked for, take() must run or skip every one within 5 s: count each cancelled lookup it "
        "drops in counts_.lookups_skipped");
    REQUIRE(eventually([&] { return q.counts().lookups_skipped + q.counts().lookups_run == 5; }));
  }
  {
    INFO("the lookup function saw " << Catch::Detail::stringify(lookup.log())
                                    << "; cancelled lookups (b, c, e) must be skipped, however many in a row");
    CHECK(lookup.log() == std::vector<std::string>{"a", "d"});
    CHECK(q.counts().lookups_skipped == 3);
  }
  REQUIRE(eventually([&] { return answers.snapshot().size() == 2; }));
  CHECK(answers.snapshot() == std::vector<std::string>{"addr-of-a", "addr-of-d"});
  // The queue emptied on a skip: the thread must wait for the next lookup, not end.
  q.resolve("f", answers.record());
  {
    INFO(
        "a lookup asked for after the queue emptied on a skipped one never ran: take() waits again after a skip "
        "(it returns nullptr only when the queue stops)");
    CHECK(eventually([&] { return answers.snapshot().size() == 3; }));
  }
  check_one_step(q);
}

TEST_CASE(
    "resolver-cancel: a lookup cancelled while it runs finishes there, its answer is dropped, and cancel says it was "
    "too late",
    "[resolver-cancel][ch04]") {
  handoff::testkit::Watchdog dog(20s, "a lookup cancelled while it runs");
  GatedLookup lookup(1);
  Answers answers;
  LookupQueue q(1, lookup.function());
  auto a = q.resolve("a", answers.record());
  REQUIRE(lookup.wait_inside(1));
  CHECK_FALSE(q.cancel(a));  // a thread took it: too late to keep it from libc
  lookup.open();
  REQUIRE(eventually([&] { return q.counts().answers_dropped == 1; }));
  CHECK(answers.snapshot().empty());
  CHECK(q.counts().lookups_run == 1);
  CHECK(q.counts().lookups_skipped == 0);
  check_one_step(q);
}

// The window between take()'s cancel check and its mark, held open by the hook: a cancel
// from another thread either waits for the mark (the check and the mark in one step under
// the lock: cancel says "too late", the lookup runs, its answer is dropped) or lands inside
// the window (the step split in two: cancel says "stopped it", yet the lookup runs). The
// hook holds the thread until cancel() has returned or 100 ms have passed (cancel() cannot
// return while the lock is held, so a correct take costs the 100 ms).
TEST_CASE("resolver-cancel: a cancel that arrives between take's check and its mark is too late, and says so",
          "[resolver-cancel][ch04]") {
  handoff::testkit::Watchdog dog(20s, "a cancel inside take's window");
  std::mutex m;
  std::condition_variable cv;
  bool in_window = false, cancel_returned = false;
  exercise::LookupQueueHooks hooks;
  hooks.after_cancel_check = [&] {
    std::unique_lock<std::mutex> g(m);
    if (in_window) return;  // only the first lookup is held
    in_window = true;
    cv.notify_all();
    cv.wait_for(g, 100ms, [&] { return cancel_returned; });
  };
  GatedLookup lookup(1);  // the lookup waits at the gate, so cancel() comes before its answer
  Answers answers;
  LookupQueue q(1, lookup.function(), hooks);
  auto a = q.resolve("a", answers.record());
  {
    std::unique_lock<std::mutex> g(m);
    INFO(
        "take() never called hooks_.after_cancel_check(): call it between finding a lookup not cancelled and "
        "marking it started, where this test holds the thread");
    REQUIRE(cv.wait_for(g, 2s, [&] { return in_window; }));  // the thread is inside the window
  }
  const bool stopped = q.cancel(a);
  {
    std::lock_guard<std::mutex> g(m);
    cancel_returned = true;
    cv.notify_all();
  }
  lookup.open();
  // Settled once the lookup was skipped or its answer dropped: a lookup that runs is in the
  // log before it returns, so before its answer is dropped (lookups_run is counted earlier,
  // as the thread starts it, and would let the log be read before the lookup wrote it).
  REQUIRE(eventually([&] { return q.counts().lookups_skipped + q.counts().answers_dropped == 1; }));
  const bool ran = lookup.log() == std::vector<std::string>{"a"};
  {
    // With the hook after the check, as asked, the cancel is too late (the lookup runs); a
    // take that calls it before its check may skip the lookup instead. Either is right, as
    // long as cancel() said which.
    INFO("cancel() returned " << stopped << " and the lookup " << (ran ? "ran" : "did not run")
                              << ": cancel() must say it stopped a lookup exactly when the lookup never runs");
    CHECK(stopped != ran);
  }
  if (ran) REQUIRE(eventually([&] { return q.counts().answers_dropped == 1; }));  // its answer dropped
  CHECK(answers.snapshot().empty());
  check_one_step(q);
}

TEST_CASE(
    "resolver-cancel: lookups reach the lookup function in the order they were asked for, cancelled ones left out",
    "[resolver-cancel][ch04]") {
  handoff::testkit::Watchdog dog(20s, "lookup order");
  GatedLookup lookup(1);
  Answers answers;
  LookupQueue q(1, lookup.function());
  q.resolve("first", answers.record());
  REQUIRE(lookup.wait_inside(1));
  std::vector<std::string> want{"first"};
  for (int i = 0; i < 30; ++i) {
    auto t = q.resolve(std::to_string(i), answers.record());
    if (i % 3 == 1) {
      CHECK(q.cancel(t));
    } else {
      want.push_back(std::to_string(i));
    }
  }
  lookup.open();
  REQUIRE(eventually([&] { return q.counts().lookups_skipped + q.counts().lookups_run == 31; }));
  INFO("lookups start in the order they were asked for: take the oldest, from the front of the queue");
  CHECK(lookup.log() == want);
  check_one_step(q);
}

TEST_CASE(
    "resolver-cancel: a burst of 1,000 lookups behind four busy threads, every other one cancelled, runs exactly the "
    "others",
    "[resolver-cancel][ch04]") {
  handoff::testkit::Watchdog dog(30s, "a burst of 1,000 lookups");
  GatedLookup lookup(4);
  Answers answers;
  LookupQueue q(4, lookup.function());
  for (int i = 0; i < 4; ++i) q.resolve("busy" + std::to_string(i), answers.record());
  REQUIRE(lookup.wait_inside(4));
  int cancelled_now = 0;
  for (int i = 0; i < 1000; ++i) {
    auto t = q.resolve("n" + std::to_string(i), answers.record());
    if (i % 2 == 1 && q.cancel(t)) ++cancelled_now;
  }
  CHECK(cancelled_now == 500);
  lookup.open();
  INFO("take() must skip, and count in counts_.lookups_skipped, exactly the 500 cancelled lookups");
  REQUIRE(eventually([&] { return q.counts().lookups_skipped + q.counts().lookups_run == 1004; }));
  CHECK(q.counts().lookups_run == 504);
  CHECK(q.counts().lookups_skipped == 500);
  for (const std::string& name : lookup.log()) {
    if (name[0] != 'n') continue;
    INFO(name);
    CHECK(std::stoi(name.substr(1)) % 2 == 0);
  }
  REQUIRE(eventually([&] { return answers.snapshot().size() == 504; }));
  check_one_step(q);
}
