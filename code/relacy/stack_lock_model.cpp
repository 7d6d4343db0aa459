// relacy/stack_lock_model: the stack lock's sleepers and its unlock under a relaxed-memory
// checker, the futex modelled (chapter 05).
// Role: run the product's own LockWord (stack/stack_lock_word.h: the CASes that decide) and
// LockSleeper (stack/lock_sleeper.h: the sleep loop and its futex calls) on Relacy's atomics
// and its futex (relacy/relacy_atomics.h), with a holder and two sleepers, and search the
// interleavings and every value the C++ memory model lets each load read. The promises: no
// sleeper is left asleep with nobody to wake it (Relacy reports the stuck thread as a
// deadlock), and each holder sees what the one before it wrote under the lock (Relacy
// reports a data race on the plain variable otherwise).
//
// Two sleepers, because the rule the library's sleep loop adds shows only with two: a
// thread that has slept takes the lock WITH NEED_WAKE, since the unlock that woke it
// cleared the only record of the other sleeper. The copied waiter, the form this model
// used to carry by hand (take without NEED_WAKE after a sleep), is kept as the negative
// control: with one sleeper nothing tells the two apart, with two it strands a sleeper.
//
//   stack_lock_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "stack/lock_sleeper.h"
#include "stack/stack_lock_word.h"

namespace {

using handoff::models::bounded_search;
using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::stack::ReleaseBy;
using handoff::stack::StackLockPoint;

/// Which waiter the sleepers run.
enum class Waiter {
  library,  ///< LockSleeper::sleep, the product's
  copied,   ///< the negative control: the same loop taking the lock without NEED_WAKE after a sleep
};

/// The copied waiter (the negative control; see the file's comment): the library's loop
/// with its one difference, the take after a sleep adds no NEED_WAKE.
template <class Word>
void copied_sleep(Word& word) {
  for (;;) {
    std::uint32_t w = 0;
    if (word.take_or_flag(w, 0, [] { return false; }) == Word::Look::took) return;
    RelacyAtomics::futex_wait(word.atom(), w, 0);
  }
}

/// A holder and two sleepers (Relacy).
///
/// Thread 0 holds the lock (taken in before()) and unlocks it; threads 1 and 2 each take
/// it and unlock it: StackLock::lock with buzz_ns = 0 (one try, then the sleeper) and
/// StackLock::unlock with no deferred work and no hand-off (release_step, then a
/// FUTEX_WAKE when the word released had NEED_WAKE). Each critical section adds one to a
/// plain variable; at the end it must be 3.
template <Waiter Who, ReleaseBy How, class Atoms = RelacyAtomics>
struct Sleepers : rl::test_suite<Sleepers<Who, How, Atoms>, 3> {
  using Word = handoff::stack::LockWord<Atoms>;
  using Sleeper = handoff::stack::LockSleeper<Atoms>;
  Word word;
  Sleeper sleeper;
  rl::var<int> data;  // what the critical sections share, a plain variable

  void before() {
    std::uint32_t w = word.look();
    const bool held = word.try_take(w, 0);  // thread 0 holds the lock
    RL_ASSERT(held);
    data($) = 0;
    handoff::models::model_clock.reset();  // no hand-off: the clock is read, never decides
  }

  void lock() {
    std::uint32_t w = word.look();
    if (word.try_take(w, 0)) return;
    if constexpr (Who == Waiter::library) {
      std::uint32_t sleeps = 0;
      const bool handed = sleeper.sleep(word, 0, true, sleeps, [](StackLockPoint) {});
      RL_ASSERT(!handed);  // no hand-off: handoff_after_ns is 0
    } else {
      copied_sleep(word);
    }
  }

  void unlock() {
    std::uint32_t w = word.look();
    const auto nothing_before_release = [] {};
    const auto step = word.release_step(w, nothing_before_release, How);
    RL_ASSERT(step == Word::Step::released);  // no list, no request here
    if ((w & Word::kNeedWake) != 0) Sleeper::wake_one(word);
  }

  void thread(unsigned id) {
    if (id != 0) lock();
    data($) = data($) + 1;
    unlock();
  }

  void after() { RL_ASSERT(data($) == 3); }
};

// The search: exhaustive to a context bound of 3 (every execution with up to three
// preemptions, each with every value each load may read). The full search of three
// threads that each may loop through the sleep is too large for CTest's budget; the
// copied waiter's stranded sleeper needs one preemption.
constexpr unsigned kBound = 3;

SearchResult library() {
  return bounded_search<Sleepers<Waiter::library, ReleaseBy::compare_exchange>>(
      "stack lock: two sleepers in LockSleeper::sleep; release by CAS", kBound);
}
SearchResult copied() {
  return bounded_search<Sleepers<Waiter::copied, ReleaseBy::compare_exchange>>(
      "stack lock: two copied waiters that take without NEED_WAKE after a sleep", kBound);
}
SearchResult store_release() {
  return bounded_search<Sleepers<Waiter::library, ReleaseBy::store>>(
      "stack lock: LockSleeper::sleep; release by a plain store after a load", kBound);
}

/// The lock's own release/acquire, each cut alone: the unlock's releasing CAS
/// (release_step) and the taker's acquiring CAS (try_take). Either way a holder no longer
/// sees what the one before it wrote under the lock.
struct UnlockRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "release_step";
};
struct TakeAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "try_take";
};
SearchResult release_relaxed() {
  return bounded_search<Sleepers<Waiter::library, ReleaseBy::compare_exchange, CutAtomics<UnlockRelease>>>(
      "stack lock: the unlock's releasing CAS made relaxed", kBound);
}
SearchResult take_relaxed() {
  return bounded_search<Sleepers<Waiter::library, ReleaseBy::compare_exchange, CutAtomics<TakeAcquire>>>(
      "stack lock: the taker's acquiring CAS made relaxed", kBound);
}

constexpr Check kChecks[] = {
    {"sleepers", library, false},           {"copied-waiter", copied, true},
    {"store-release", store_release, true}, {"release-relaxed", release_relaxed, true},
    {"take-relaxed", take_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
