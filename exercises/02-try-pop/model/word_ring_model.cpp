// exercises/02-try-pop/model: the grader's model, your try_pop under the C++ memory model.
// Role: build word_ring_push.cpp and the learner's pop (EXERCISE_LEARNER_FILE) on Relacy's
// atomics, with each cell's value a Relacy variable (a read or write of it that no
// happens-before orders against another thread's write is a data race), and run two threads
// that each push, pop, push and pop on a ring of two cells, so that the second lap reuses the
// cells the first lap's pops gave back. Every word pushed must come out once, and no value
// may be read or overwritten unordered. The random scheduler runs a fixed set of executions,
// each chosen from its number, so a verdict never depends on the machine.
//
//   ex-02-try-pop-<variant>-model [--expect-refuted]
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include <cstdint>
#include <memory>
#include <stdexcept>

// After the library's headers: from here on std::atomic_thread_fence is Relacy's.
#include "exercise_model.h"

#define EXERCISE_MODEL_SEAM
namespace exercise {
using Atoms = model::Atoms;

/// A cell's value as Relacy sees it: each read and write is checked against the
/// happens-before order the atomics built.
template <class T>
class Plain {
 public:
  Plain(T value = T()) : v_(value) {}
  operator T() const { return v_($); }
  Plain& operator=(T value) {
    v_($) = value;
    return *this;
  }

 private:
  rl::var<T> v_;
};
}  // namespace exercise

#include "word_ring.h"
#include "word_ring_push.cpp"
#include EXERCISE_LEARNER_FILE

namespace exercise {

/// Threads 0 and 1 each push a word, pop one, push another and pop one: four words in, at
/// most two in the ring at once, and the second lap in cells the first lap freed.
struct WordRingModel : rl::test_suite<WordRingModel, 2> {
  WordRing ring{2};
  std::uint64_t got[2][2] = {};  // each thread's pops, read in after() only

  void thread(unsigned id) {
    for (unsigned round = 0; round < 2; ++round) {
      // Either may fail for a moment: a push finds a cell a pop has claimed and not yet
      // given back, a pop finds one a push has claimed and not yet published. A thread that
      // waits for ever is Relacy's livelock.
      while (!ring.try_push(1 + id + 2 * round)) rl::yield(1, $);  // words 1..4
      std::uint64_t v = 0;
      while (!ring.try_pop(v)) rl::yield(1, $);
      got[id][round] = v;
    }
  }

  void after() {
    bool seen[5] = {};
    for (auto& t : got) {
      for (std::uint64_t v : t) {
        model::expect(v >= 1 && v <= 4 && !seen[v],
                      "a word came out twice, or a word came out that was never pushed: two consumers took "
                      "one cell, or a consumer took a cell before its word was published.");
        seen[v] = true;
      }
    }
  }
};

/// Two words wait in the ring, pushed before either consumer starts (thread 0 pushes them,
/// then lets threads 1 and 2 go), and each consumer pops once. However the two pops overlap,
/// each finds a word there for it: a pop that says "empty" because the other consumer got
/// ahead of it, instead of looking again at the next position, is wrong.
struct PopWhileWordsWait : rl::test_suite<PopWhileWordsWait, 3> {
  WordRing ring{4};
  Atoms::atomic<int> pushed{0};  // the model's own signal: both words are in
  bool popped[3] = {};           // each consumer's try_pop's answer, read in after() only
  std::uint64_t got[3] = {};

  void thread(unsigned id) {
    if (id == 0) {
      model::expect(ring.try_push(1) && ring.try_push(2), "a push into an empty ring of four failed.");
      pushed.store(1, std::memory_order_release);
      return;
    }
    while (pushed.load(std::memory_order_acquire) == 0) rl::yield(1, $);
    popped[id] = ring.try_pop(got[id]);
    model::expect(popped[id],
                  "try_pop said the ring was empty while a word was waiting for it: another consumer got ahead "
                  "(took the position this pop had read, or won the CAS), and this pop gave up instead of "
                  "reading the position again and trying the next cell.");
  }

  void after() {
    model::expect((got[1] == 1 && got[2] == 2) || (got[1] == 2 && got[2] == 1),
                  "the two consumers did not take the two words, one each: two consumers took one cell.");
  }
};

}  // namespace exercise

int main(int argc, char** argv) {
  return exercise::model::run<exercise::WordRingModel, exercise::PopWhileWordsWait>(
      argc, argv, "ex-02-try-pop (model)", {rl::sched_random, 200'000},
      {.deadlock = "every thread waits on another: a deadlock.",
       .livelock = "a thread spins for ever: a pop that claimed a cell waits on a word nobody will publish.",
       .data_race = "a data race on a cell's value: the pop read the word without an acquire that pairs with "
                    "the push's release of the cell's sequence, or gave the cell back without a release that "
                    "orders its read before the next lap's push overwrites it."});
}
