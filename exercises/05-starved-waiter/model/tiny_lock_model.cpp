// exercises/05-starved-waiter/model: the grader's model, your unlock under the C++ memory model.
// Role: build tiny_lock.cpp and the learner's unlock.cpp (EXERCISE_LEARNER_FILE) on Relacy's
// atomics, a modelled futex and the model's clock (exercises/model/exercise_model.h), and run
// seed 004's starvation with a third waiter beside it:
//   thread 0, the spinner: takes the lock, and twice unlocks and at once re-takes it with
//     try_lock() (lock() only if that fails), then unlocks for good;
//   thread 1, the starved sleeper: its sleeps last the bound, so once it has slept and found
//     the lock taken again it asks for the hand-off (HANDOFF_WANTED) and sleeps as a requester;
//   thread 2, a waiter whose sleeps last no time: it never passes the bound, never asks, and
//     is never rescued by a timeout, so it leaves its sleep only when an unlock wakes it.
// Every thread's critical section counts who is inside and adds to a plain variable, which
// Relacy checks for a data race (an unlock that publishes nothing to the next holder). The
// checks: no try_lock() ever wins a word that carries a request or a hand-off; a waiter that
// asked is handed the lock; nobody sleeps for good; the lock is free at the end, and every
// hand-off counted. Relacy's random scheduler runs a fixed set of executions, each chosen from
// its number, so a verdict never depends on the machine. The tests' hooks play no part.
//
//   ex-05-starved-waiter-<variant>-model [--expect-refuted]
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include <cstdint>

// After the library's headers: from here on std::atomic_thread_fence is Relacy's.
#include "exercise_model.h"

#define EXERCISE_MODEL_SEAM
namespace exercise {
using Atoms = model::Atoms;
using Clock = model::Clock;

/// FUTEX_WAIT and FUTEX_WAKE under Relacy's own mutex and condition variable: the kernel
/// compares the word and sleeps in one step with respect to a wake, and a wake sent before
/// the sleep is lost, as the kernel's is. A wake of one wakes any one sleeper (Relacy picks).
/// A timed sleep may end by its timeout only if the model's clock says the sleeper's sleeps
/// last that long; a sleep's return moves the sleeper's clock on.
class Futex {
 public:
  void wait(Atoms::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) {
    mu_.lock($);
    const bool sleeps = word.load(std::memory_order_relaxed) == expected;
    if (sleeps) {
      if (Clock::may_time_out(timeout_ns)) {
        (void)ready_.wait_until(mu_, timeout_ns, $);
      } else {
        ready_.wait(mu_, $);
      }
    }
    mu_.unlock($);
    if (sleeps) Clock::slept();
  }
  void wake(Atoms::atomic<std::uint32_t>&, int count) {
    mu_.lock($);
    if (count == 1) {
      ready_.notify_one($);
    } else {
      ready_.notify_all($);
    }
    mu_.unlock($);
  }

 private:
  rl::mutex mu_;
  rl::condition_variable ready_;
};
}  // namespace exercise

#include "tiny_lock.cpp"
#include "tiny_lock.h"
#include EXERCISE_LEARNER_FILE

namespace exercise {

constexpr std::int64_t kBound = 1000;  // the hand-off bound, in the model clock's nanoseconds

constexpr const char* kAsleep =
    "a waiter is asleep for good: no unlock's wake reaches it. A wake sent before the CAS that hands "
    "the lock over reaches a requester that still reads its request in the word: it sleeps again, and "
    "the CAS wakes nobody; a wake of one "
    "sleeper may wake another waiter instead of the requester (wake them all); and an unlock that "
    "frees the word with the request still in it leaves a requester asleep on a free lock; a hand-off "
    "that leaves HANDOFF_WANTED in the word makes the requester's own unlock hand the lock to nobody.";

/// Thread 0 the spinner, 1 the starved sleeper (it asks), 2 a waiter that never asks.
struct TinyLockModel : rl::test_suite<TinyLockModel, 3> {
  /// Notes the sleeper's request (it is the only thread whose sleeps pass the bound).
  struct Requests : TinyLockHooks {
    bool asked = false;  // written and read by thread 1 only
    void at(TinyLockPoint p) noexcept override {
      if (p == TinyLockPoint::handoff_requested && rl::thread_index() == 1) asked = true;
    }
  };
  Requests requests;
  TinyLock lock{kBound, &requests};
  Atoms::atomic<int> inside{0};
  rl::var<int> data;  // the lock guards it: each holder reads what the last one wrote
  int handed = 0;     // lock() calls that returned handed (thread 1 only)

  void before() {
    model::Clock::reset({0, kBound, 0});
    data($) = 0;
  }

  void critical_section() {
    model::expect(inside.fetch_add(1, std::memory_order_relaxed) == 0,
                  "two threads hold the lock at once: a hand-off must keep LOCKED set until the requester "
                  "takes HANDED, or a spinner's try_lock gets in beside it.");
    data($) = data($) + 1;
    inside.fetch_sub(1, std::memory_order_relaxed);
  }

  /// The spinner's re-take: try_lock() at once, and a look at the word it won.
  void spinner_take() {
    std::uint32_t was = 0;
    if (!lock.try_lock(was)) {
      (void)lock.lock();
      return;
    }
    model::expect((was & TinyLock::kHandoffWanted) == 0,
                  "the spinner's try_lock took the lock while a waiter past the bound was asking for it: the "
                  "unlock freed the word with HANDOFF_WANTED still set instead of handing the lock over, so "
                  "the starved waiter loses again (seed 004's stall).");
    model::expect((was & TinyLock::kHanded) == 0,
                  "the spinner's try_lock took a lock that had been handed to the requester: a hand-off must "
                  "keep LOCKED set.");
  }

  void thread(unsigned id) {
    if (id == 0) {
      (void)lock.lock();
      for (int round = 0; round < 2; ++round) {
        critical_section();
        (void)lock.unlock();
        spinner_take();
      }
      critical_section();
      (void)lock.unlock();
    } else {
      const TinyLockResult got = lock.lock();
      critical_section();
      if (id == 1) {
        model::expect(!requests.asked || got.handed,
                      "the waiter asked for the hand-off (HANDOFF_WANTED) and had to win the lock by itself: "
                      "the unlock dropped the request without handing the lock over, or handed it with "
                      "LOCKED clear, so that another thread took the free word first.");
        if (got.handed) ++handed;
      }
      (void)lock.unlock();
    }
  }

  void after() {
    model::expect(lock.word() == 0,
                  "every thread has unlocked and the lock word is not 0: a hand-off left HANDOFF_WANTED in "
                  "the word (the requester's own unlock then hands the lock to nobody), or a release cleared "
                  "LOCKED alone (fetch_and) instead of freeing the word it checked with one CAS, so a request "
                  "that came in meanwhile stays in a free word, never served.");
    model::expect(lock.handoffs() == static_cast<std::uint64_t>(handed),
                  "the number of hand-offs counted in handoffs_ is not the number of times a waiter was "
                  "handed the lock: count each hand-off once, when its CAS has won.");
  }
};

}  // namespace exercise

int main(int argc, char** argv) {
  return exercise::model::run<exercise::TinyLockModel>(
      argc, argv, "ex-05-starved-waiter (model)", {rl::sched_random, 200'000},
      {.deadlock = exercise::kAsleep,
       .livelock = "a thread spins for ever: a lock that is never free again (a hand-off that nobody "
                   "takes), or an unlock whose loop never ends.",
       .data_race = "a data race on what the lock guards: the next holder may not see the last holder's "
                    "critical section. The unlock is a release (its CAS, or a release fence before a "
                    "relaxed CAS), whether it frees the word or hands it over; the taker's CAS is the "
                    "acquire it pairs with."});
}
