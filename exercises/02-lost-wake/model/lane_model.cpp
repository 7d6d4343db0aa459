// exercises/02-lost-wake/model: the grader's model, your park under the C++ memory model.
// Role: build lane.cpp and the learner's park.cpp (EXERCISE_LEARNER_FILE) on Relacy's
// atomics and a counted wake, run a taker against a submitter, and search every interleaving
// and every value each load may read (exercises/model/exercise_model.h). A taker that blocks
// must have a poke coming if a job is left in the ring, and a taker that leaves its park must
// leave the parked count as it found it. The test's between_steps hook is not called: the
// model fails a wrong order wherever the hook sits.
//
//   ex-02-lost-wake-<variant>-model [--expect-refuted]
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include <chrono>
#include <functional>
#include <optional>

#include "sync/mpmc_ring.h"
// After the library's headers: from here on std::atomic_thread_fence is Relacy's.
#include "exercise_model.h"

#define EXERCISE_MODEL_SEAM
namespace exercise {
using Atoms = model::Atoms;

/// The eventfd under Relacy's own mutex and condition variable: poke() counts a poke and
/// wakes the waiter, wait() sleeps until a poke is there and takes them all. (The kernel's
/// lock around an eventfd's write and read orders them, and no more: a lock's acquire and
/// release are not a fence.) A taker asleep with no poke ever coming is a thread blocked for
/// good, which Relacy reports as a deadlock when the submitter has ended.
class Wake {
 public:
  void poke() {
    mu_.lock($);
    ++pokes_;
    ready_.notify_one($);
    mu_.unlock($);
  }
  bool wait(std::chrono::milliseconds) {
    mu_.lock($);
    while (pokes_ == 0) ready_.wait(mu_, $);
    pokes_ = 0;
    mu_.unlock($);
    return true;
  }

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
    "the taker is asleep beside a job and no poke is coming: its re-check missed the push while submit "
    "read no parked taker. Announce first, then a seq_cst fence, then re-check: only a fence between a "
    "store and a later load keeps them in order (acquire, release and a seq_cst read-modify-write do not).";

/// A taker (thread 1) takes once while the submitter (thread 0) submits one job. A taker
/// asleep for good is Relacy's deadlock (the lost wake); one that comes back must bring the
/// job and leave the parked count at zero.
struct LaneModel : rl::test_suite<LaneModel, 2> {
  Lane lane;
  std::optional<int> taken;  // written by the taker, read in after() only

  void thread(unsigned id) {
    if (id == 0) {
      lane.submit(7);
    } else {
      taken = lane.take(std::chrono::hours(1));
    }
  }

  void after() {
    model::expect(taken == 7, "the taker came back without the job that was submitted.");
    model::expect(lane.parked_.load(std::memory_order_relaxed) == 0,
                  "the taker left its park and is still counted parked: a park takes its announcement "
                  "back however it ends, a re-check that found a job, a poke or a timeout (or every later "
                  "submit pokes a taker that is not there).");
  }
};

}  // namespace exercise

int main(int argc, char** argv) {
  return exercise::model::run<exercise::LaneModel>(
      argc, argv, "ex-02-lost-wake (model)", {rl::sched_full, 3'000'000},
      {.deadlock = exercise::kLostWake, .livelock = "a thread spins for ever: the park or the take never gives up the processor."});
}
