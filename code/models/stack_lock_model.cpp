// models/stack_lock_model: the stack lock's unlock against a waiter that flags NEED_WAKE
// and sleeps, under a relaxed-memory checker (chapter 05).
// Role: run the product's own LockWord (stack/stack_lock_word.h: the waiter's
// take_or_flag, the unlock's release_step) on Relacy's atomics, and search every
// interleaving and every value the C++ memory model lets each load read. The promises: a
// waiter that sleeps has a FUTEX_WAKE coming (no lost wake), and a waiter that takes the
// lock sees what the holder wrote under it (Relacy reports a data race on the plain
// variable otherwise). The lock's release by CAS must hold; the release by a plain store
// (ReleaseBy::store) must be refuted.
//
// FUTEX_WAIT is stood in for by a CAS that writes the expected value back: the kernel
// compares the word under the futex's bucket lock, which the waker's FUTEX_WAKE (sent after
// its change to the word) also takes, so a wait either sees the change or is queued before
// the wake; a read-modify-write reads the last value in the word's modification order,
// which is that comparison. A thread that sleeps runs no further in the model.
//
//   stack_lock_model [CHECK]   runs one check by name, or all of them
#include "models/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "stack/stack_lock_word.h"

namespace {

using handoff::models::Check;
using handoff::models::full_search;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::stack::ReleaseBy;
using Word = handoff::stack::LockWord<RelacyAtomics>;

/// FUTEX_WAIT's check (see the file's comment): true when the thread sleeps.
bool futex_wait_sleeps(Word& word, std::uint32_t expected) {
  std::uint32_t seen = expected;
  return word.atom().compare_exchange_strong(seen, expected, std::memory_order_relaxed, std::memory_order_relaxed);
}

/// An unlock against a sleeping waiter (Relacy).
///
/// A holder unlocks (StackLock::unlock, with no deferred work and no hand-off); a waiter
/// past its buzz runs the sleeping path (the loop of LockSleeper::sleep, stack/lock_sleeper.h:
/// take_or_flag, then FUTEX_WAIT on the word as flagged).
template <ReleaseBy How>
struct UnlockWake : rl::test_suite<UnlockWake<How>, 2> {
  Word word;
  rl::var<int> data;  // what the critical sections share, a plain variable
  int wakes = 0;      // FUTEX_WAKEs sent (the holder's); read in after() only
  bool sleeps = false;

  void before() {
    std::uint32_t w = word.look();
    const bool held = word.try_take(w, 0);  // thread 0 holds the lock
    RL_ASSERT(held);
    data($) = 0;
  }

  void thread(unsigned id) {
    if (id == 0) {  // the holder
      data($) = 1;
      std::uint32_t w = word.look();
      const auto nothing_before_release = [] {};
      const auto step = word.release_step(w, nothing_before_release, How);
      RL_ASSERT(step == Word::Step::released);  // no list, no request here
      if ((w & Word::kNeedWake) != 0) ++wakes;  // futex_wake_one
    } else {                                    // the waiter
      for (;;) {
        std::uint32_t w = 0;
        const auto look = word.take_or_flag(w, 0, [] { return false; });
        if (look == Word::Look::took) {
          RL_ASSERT(data($) == 1);  // the holder's critical section happened before ours
          return;
        }
        if (futex_wait_sleeps(word, w)) {
          sleeps = true;
          return;
        }
      }
    }
  }

  void after() { RL_ASSERT(!sleeps || wakes > 0); }
};

SearchResult cas_release() {
  return full_search<UnlockWake<ReleaseBy::compare_exchange>>("stack lock: flag NEED_WAKE by CAS; release by CAS");
}
SearchResult store_release() {
  return full_search<UnlockWake<ReleaseBy::store>>("stack lock: release by a plain store after a load");
}

constexpr Check kChecks[] = {
    {"cas-release", cas_release, false},
    {"store-release", store_release, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
