// exercises/03-wake-newest/model: the grader's model, your wake_newest under the C++ memory
// model.
// Role: build board.cpp and the learner's wake_newest.cpp (EXERCISE_LEARNER_FILE) on Relacy's
// atomics and a modelled futex, and race a waker against two threads: A parks and sleeps, B
// parks and cancels at once (its re-check found work), so the waker's choice of B may be
// overtaken by B's own way out. The waker calls wake_newest() once A is parked (it must wake
// somebody), and again if A is still parked; before each call it writes a word that the
// thread it wakes may read, and once a call has woken a thread (the one its after_choice hook
// named last) it reads a word that thread wrote before it parked. A sleeper is never woken by a timeout here, so a wake
// that never calls the futex wake, or calls it before the word changes, leaves A asleep for good (Relacy's deadlock).
// Relacy's random scheduler runs a fixed set of executions, each chosen from its number, so a verdict never depends on
// the machine.
//
//   ex-03-wake-newest-<variant>-model [--expect-refuted]
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

// After the library's headers: from here on std::atomic_thread_fence is Relacy's.
#include "exercise_model.h"

#define EXERCISE_MODEL_SEAM
namespace exercise {
using Atoms = model::Atoms;

/// FUTEX_WAIT and FUTEX_WAKE under Relacy's own mutex and condition variable: the kernel
/// compares the word and sleeps in one step with respect to a wake, and a wake sent before
/// the sleep is lost, as the kernel's is. No timeout: a sleeper leaves only when woken.
class Futex {
 public:
  void wait(Atoms::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds) {
    mu_.lock($);
    if (word.load(std::memory_order_relaxed) == expected) ready_.wait(mu_, $);
    mu_.unlock($);
  }
  void wake(Atoms::atomic<std::uint32_t>&) {
    mu_.lock($);
    ready_.notify_all($);
    mu_.unlock($);
  }

 private:
  rl::mutex mu_;
  rl::condition_variable ready_;
};
}  // namespace exercise

#include "board.cpp"
#include "board.h"
#include EXERCISE_LEARNER_FILE

namespace exercise {

constexpr const char* kAsleep =
    "a thread is asleep for good though its word was moved off PARKED: the waker never called the "
    "futex wake (nudge), or called it before the CAS that changed the word, when the sleeper had not "
    "yet looked.";

/// Thread 0 is the waker, 1 is A (parks and sleeps, word 1), 2 is B (parks and cancels, word
/// 0: a waker that takes the first parked word it finds, not the newest, meets B's cancel).
struct BoardModel : rl::test_suite<BoardModel, 3> {
  int chosen = -1;  // the waker's last choice (its after_choice hook): the thread its winning CAS woke
  Board board{2, Board::Hooks{[this](int i) { chosen = i; }}};
  Atoms::atomic<int> a_parked{0};  // the model's own signal: A has announced
  rl::var<int> gift;               // written by the waker before each wake, read by whoever it woke
  rl::var<int> note[2];            // written by each thread before it parks, read by the waker that woke it

  void before() {
    gift($) = 0;
    note[0]($) = 0;
    note[1]($) = 0;
  }

  /// After a wake that returned true: the waker reads what the thread it woke wrote before it
  /// parked (the CAS's acquire half, pairing with announce()'s release).
  void read_note_of_woken() {
    if (chosen >= 0) (void)static_cast<int>(note[chosen]($));
  }

  void thread(unsigned id) {
    if (id == 0) {
      while (a_parked.load(std::memory_order_acquire) == 0) rl::yield(1, $);
      gift($) = 1;
      model::expect(board.wake_newest(),
                    "wake_newest() returned false while a thread was parked: a waker whose CAS lost to "
                    "a thread's own cancel must choose again.");
      read_note_of_woken();
      if (board.kind(1) == Board::Kind::parked) {  // the first wake went to B
        gift($) = 2;
        model::expect(board.wake_newest(), "wake_newest() returned false while a thread was parked.");
        read_note_of_woken();
      }
    } else if (id == 1) {
      note[1]($) = 1;
      const std::uint32_t ticket = board.announce(1);
      a_parked.store(1, std::memory_order_release);
      if (board.sleep(1, ticket, std::chrono::hours(1))) (void)static_cast<int>(gift($));  // woken: read it
    } else {
      note[0]($) = 1;
      const std::uint32_t ticket = board.announce(0);
      (void)board.cancel(0, ticket);
    }
  }

  void after() {
    model::expect(board.parked_.load(std::memory_order_relaxed) == 0,
                  "the parked count did not come back to zero: a park was lowered twice (a plain store "
                  "of WOKEN over a thread that had cancelled, or a decrement whatever the CAS said) or "
                  "not at all.");
    model::expect(board.kind(0) == Board::Kind::running && board.kind(1) == Board::Kind::running,
                  "a thread left its park and its word does not say RUNNING: the waker wrote WOKEN over "
                  "a thread that had already left by itself.");
  }
};

}  // namespace exercise

int main(int argc, char** argv) {
  return exercise::model::run<exercise::BoardModel>(
      argc, argv, "ex-03-wake-newest (model)", {rl::sched_random, 200'000},
      {.deadlock = exercise::kAsleep,
       .livelock = "a thread spins for ever: the waker never gives up the processor.",
       .data_race = "a data race between the waker and the thread it woke: the CAS that moves the word to "
                    "WOKEN is both halves of the wake's edge (acq_rel). Its acquire pairs with announce()'s "
                    "release, so what the thread did before it parked is visible to the waker; its release "
                    "pairs with sleep()'s acquire load, so what the waker did before the wake is visible to "
                    "the woken thread."});
}
