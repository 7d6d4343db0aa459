// exercises/03-chained-wake/model: the grader's model, your pass_wake_on under the C++
// memory model.
// Role: build lane.cpp and the learner's pass_wake_on.cpp (EXERCISE_LEARNER_FILE) on Relacy's
// atomics and a counted semaphore, run two takers against a submitter of two jobs, and search
// the interleavings and the values each load may read (exercises/model/exercise_model.h).
// Chapter 03's stolen credit is one of them: B parks, the poke for the first job is eaten by
// A's look at the socket, A pops that job and looks at the ring while the second job is
// pushed. Each taker must come back with one of the two jobs; a taker asleep for good
// (Relacy's deadlock) is the lost wake. And when both are back, the word must agree with the
// socket (no taker parked, one wake in flight per poke left): a poke sent without its credit
// breaks the count that every later wake is decided by. Throughout, the word is watched
// (LaneAtoms): no change may raise its wakes in flight above its parked threads, or a credit
// was spent that was not free. x86 cannot show the fence-less
// pass-on losing a wake; this model does, as the library's ring pool model does
// (code/relacy/ring_pool_model.cpp).
//
// Three threads are too many for Relacy's full search in CI's time; the random scheduler
// runs 200,000 executions, each chosen from its number, so a verdict never depends on the
// machine (the fence-less pass-on is refuted within about 1,500).
//
//   ex-03-chained-wake-<variant>-model [--expect-refuted]
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>

#include "sync/mpmc_ring.h"
// After the library's headers: from here on std::atomic_thread_fence is Relacy's.
#include "exercise_model.h"

#define EXERCISE_MODEL_SEAM
namespace exercise {

constexpr const char* kCreditSpentTwice =
    "a wake went out on a credit that was not there: a change to the word raised its wakes in flight above "
    "the parked threads. A credit may be taken only from a word whose parked threads outnumber its wakes in "
    "flight, and the look and the take must be one compare-exchange (wake_one_if_parked, submit's rule): "
    "checked first and added after, submit and the pass-on can both see the one credit free and spend it "
    "twice, and the sibling is woken for nothing.";

/// model::Atoms with one watch, on the lane's word (`watched`, set by the model before each
/// execution): every change that raises the wakes in flight must leave them at most the
/// parked threads, as wake_one_if_parked's compare-exchange does. (A woken taker lowers both
/// halves, and a parked taker whose re-check found a job lowers the parked half under a wake
/// still in flight: neither raises the wakes.) A learner's raise of the word, by fetch_add,
/// exchange, a compare-exchange, ++ or +=, is checked here.
struct LaneAtoms : model::Atoms {
  static inline const void* watched = nullptr;

  template <class T>
  class atomic : public model::Atoms::atomic<T> {
    using base = model::Atoms::atomic<T>;
    using here = std::source_location;
    static constexpr auto sc = std::memory_order_seq_cst;

    void check(T old, T now) const {
      if constexpr (std::is_same_v<T, std::uint64_t>) {
        if (static_cast<const void*>(this) != watched) return;
        const T wakes_old = old & 0xffff'ffffU, wakes_now = now & 0xffff'ffffU;
        if (wakes_now > wakes_old) model::expect(wakes_now <= (now >> 32), kCreditSpentTwice);
      }
    }

    // A compare-exchange that succeeded changed the word from `expected` to `desired`.
    template <class Cas>
    bool checked(T& expected, T desired, Cas cas) {
      const T old = expected;
      const bool ok = cas();
      if (ok) check(old, desired);
      return ok;
    }

   public:
    using base::base;
    using base::load;
    using base::store;
    using base::operator=;
    T fetch_add(T v, std::memory_order o = sc, here at = here::current()) {
      const T old = base::fetch_add(v, o, at);
      check(old, old + v);
      return old;
    }
    T exchange(T v, std::memory_order o = sc, here at = here::current()) {
      const T old = base::exchange(v, o, at);
      check(old, v);
      return old;
    }
    // The four compare-exchange forms differ only in the base call they make.
    bool compare_exchange_weak(T& expected, T desired, std::memory_order o = sc, here at = here::current()) {
      return checked(expected, desired, [&] { return base::compare_exchange_weak(expected, desired, o, at); });
    }
    bool compare_exchange_weak(T& expected, T desired, std::memory_order success, std::memory_order failure,
                               here at = here::current()) {
      return checked(expected, desired,
                     [&] { return base::compare_exchange_weak(expected, desired, success, failure, at); });
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order o = sc, here at = here::current()) {
      return checked(expected, desired, [&] { return base::compare_exchange_strong(expected, desired, o, at); });
    }
    bool compare_exchange_strong(T& expected, T desired, std::memory_order success, std::memory_order failure,
                                 here at = here::current()) {
      return checked(expected, desired,
                     [&] { return base::compare_exchange_strong(expected, desired, success, failure, at); });
    }
    T operator++() { return fetch_add(1) + 1; }
    T operator++(int) { return fetch_add(1); }
    T operator+=(T v) { return fetch_add(v) + v; }
  };
};
using Atoms = LaneAtoms;

/// The shared eventfd in semaphore mode, under Relacy's own mutex and condition variable
/// (the kernel's lock around a write and a read orders them, and no more: a lock's acquire
/// and release are not a fence). wait() sleeps until a poke is there and takes one.
class Wake {
 public:
  void poke() {
    mu_.lock($);
    ++pokes_;
    ready_.notify_all($);
    mu_.unlock($);
  }
  bool try_take() {
    mu_.lock($);
    const bool took = pokes_ > 0;
    if (took) --pokes_;
    mu_.unlock($);
    return took;
  }
  bool wait(std::chrono::milliseconds) {
    mu_.lock($);
    while (pokes_ == 0) ready_.wait(mu_, $);
    --pokes_;
    mu_.unlock($);
    return true;
  }
  /// Pokes in the socket that nobody has taken; read in the model's after() only.
  int left() const { return pokes_; }

 private:
  rl::mutex mu_;
  rl::condition_variable ready_;
  int pokes_ = 0;  // guarded by mu_
};
}  // namespace exercise

#include "lane.h"
#include "lane.cpp"
#include EXERCISE_LEARNER_FILE

namespace exercise {

constexpr const char* kLostWake =
    "a taker is asleep with a job in the ring and no wake coming. Either the awake taker that ate the "
    "poke meant for it passed no wake on though work was left, or it gave the stolen credit back and "
    "looked at the ring with no seq_cst fence between the two, so submit read the credit still out (no "
    "poke) while that look missed its push (no chained wake): coherence orders the word, not the ring.";

/// The submitter (thread 0) submits two jobs; takers A (1) and B (2) take one each.
struct LaneModel : rl::test_suite<LaneModel, 3> {
  Lane lane;
  std::optional<int> taken[3];  // each taker's, read in after() only

  void before() { LaneAtoms::watched = &lane.wait_word_; }

  void thread(unsigned id) {
    if (id == 0) {
      lane.submit(1);
      lane.submit(2);
    } else {
      taken[id] = lane.take(std::chrono::hours(1));
    }
  }

  void after() {
    model::expect(taken[1] && taken[2] && *taken[1] + *taken[2] == 3,
                  "a taker came back without a job, or two came back with the same one.");
    // relaxed: every thread has ended; this reads the word as they left it.
    const std::uint64_t word = lane.wait_word_.load(std::memory_order_relaxed);
    model::expect(parked_of(word) == 0 && wakes_of(word) == lane.wake_.left(),
                  "a poke went into the socket without its credit, or a credit without its poke: with every "
                  "taker gone, the word must count no taker parked and exactly as many wakes in flight as "
                  "pokes left in the socket. Pass a wake on through submit's rule (wake_one_if_parked), which "
                  "counts the wake in flight before it pokes; a poke nobody counted is given back by whoever "
                  "takes it, and the counts no longer say who has a wake coming.");
  }
};

}  // namespace exercise

int main(int argc, char** argv) {
  return exercise::model::run<exercise::LaneModel>(
      argc, argv, "ex-03-chained-wake (model)", {rl::sched_random, 200'000},
      {.deadlock = exercise::kLostWake, .livelock = "a thread spins for ever: it never gives up the processor."});
}
