// relacy/handoff_token_model: the stack lock's hand-off token under a relaxed-memory checker,
// the futex and the clock modelled (chapter 05; issue 39).
// Role: run the product's own LockWord (stack/stack_lock_word.h: the request, its withdrawal,
// the release) and LockSleeper (stack/lock_sleeper.h: the sleep loop with its starvation
// bound, hand_over() and the requester's wait for the token) on Relacy's atomics, its futex
// and its clock (relacy/relacy_atomics.h), and search the interleavings, every value the C++
// memory model lets each load read, and each timeout of a timed sleep (which moves the
// model's clock by that timeout, so a sleeper that slept out its bound has starved). Three
// threads: an unlocker that holds the lock at the start, and two sleepers with the hand-off
// on, each of which, once it has slept past the bound, raises HANDOFF_WANTED and waits for
// the token. So the search holds the case the token's exchange is there for: the unlocker
// withdraws one requester's request and publishes the token, and the second sleeper, past the
// bound too, raises the bit again and reaches the token first. The promises: each holder sees
// what the one before it wrote under the lock (Relacy reports a data race on the plain
// variable otherwise), one token makes one owner (every hand-off received was sent), and no
// thread is left asleep (Relacy reports a deadlock).
//
// The negative controls: the token taken by a load and a store (LockSleeper's broken take,
// kept for this and for the exclusion stress), which lets both requesters own the lock; and
// hand_over()'s release store, or the requester's acquire exchange, made relaxed, which lets
// the new owner miss the old owner's writes. Each must be refuted.
//
//   handoff_token_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "stack/lock_sleeper.h"
#include "stack/stack_lock_word.h"

namespace {

using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::model_clock;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::stack::ReleaseBy;
using handoff::stack::StackLockPoint;

/// The starvation bound (StackLockOptions::handoff_after_ns), in the model clock's units
/// (ModelClock: time passes only as a timed sleep times out).
constexpr std::int64_t kBoundNs = 10;

/// How often, over a search, the hand-off was reached: a correct variant whose search never
/// has the second requester take a token published for the first tests nothing.
struct Reached {
  unsigned long long handed = 0;      ///< executions where some thread was handed the lock
  unsigned long long both_asked = 0;  ///< executions where both sleepers requested a hand-off
  unsigned long long barged = 0;      ///< executions where a requester, woken or not yet asleep
                                      ///< when a token was published, found it taken by the other
};
Reached reached;

/// An unlocker and two sleepers with the hand-off on (Relacy).
///
/// Thread 0 holds the lock (taken in before()) and unlocks it; threads 1 and 2 each take it
/// and unlock it: StackLock::lock with buzz_ns = 0 (one try, then LockSleeper::sleep with
/// handoff_after_ns = kBoundNs) and StackLock::unlock with no deferred work (release_step;
/// handoff_withdrawn: hand_over(); released: a FUTEX_WAKE when the word had NEED_WAKE).
/// Each critical section adds one to a plain variable; at the end it must be 3.
template <bool TakeByExchange, class Atoms = RelacyAtomics>
struct Handoff : rl::test_suite<Handoff<TakeByExchange, Atoms>, 3> {
  using Word = handoff::stack::LockWord<Atoms>;
  using Sleeper = handoff::stack::LockSleeper<Atoms>;
  Word word;
  Sleeper sleeper;
  rl::var<int> data;    // what the critical sections share, a plain variable
  int handed_over = 0;  // tokens published (hand_over calls); read in after()
  int received = 0;     // hand-offs received (sleep() returned true)
  int asked = 0;        // hand-off requests raised
  bool barged = false;  // a requester found the token published for it taken (lock())

  void before() {
    std::uint32_t w = word.look();
    const bool held = word.try_take(w, 0);  // thread 0 holds the lock
    RL_ASSERT(held);
    data($) = 0;
    model_clock.reset();
    handed_over = received = asked = 0;
    barged = false;
  }

  void lock() {
    // StackLock::lock's fast path is one try_take, which take_or_flag makes first anyway.
    std::uint32_t sleeps = 0;
    int token_sleeps = 0;  // this requester's sleeps on the token
    const auto at = [&](StackLockPoint p) {
      if (p == StackLockPoint::handoff_requested) ++asked;
      if (p == StackLockPoint::handoff_sleep) {
        // Only hand_over() wakes a sleep on the token (the modelled futex has no spurious
        // return), and a sleep that returns at once found the token published: either way a
        // requester about to sleep again found the token it was sent taken by the other.
        if (token_sleeps++ > 0) barged = true;
      }
    };
    if (sleeper.sleep(word, kBoundNs, TakeByExchange, sleeps, at)) ++received;
  }

  void unlock() {
    std::uint32_t w = word.look();
    const auto nothing_before_release = [] {};
    const auto step = word.release_step(w, nothing_before_release, ReleaseBy::compare_exchange);
    RL_ASSERT(step != Word::Step::list_taken);  // nothing is deferred here
    if (step == Word::Step::handoff_withdrawn) {
      ++handed_over;
      sleeper.hand_over();
    } else if ((w & Word::kNeedWake) != 0) {
      Sleeper::wake_one(word);
    }
  }

  void thread(unsigned id) {
    if (id != 0) lock();
    data($) = data($) + 1;
    unlock();
  }

  void after() {
    RL_ASSERT(data($) == 3);
    RL_ASSERT(received == handed_over);  // one token, one owner
    if (received > 0) ++reached.handed;
    if (asked == 2) ++reached.both_asked;
    if (barged) ++reached.barged;
  }
};

/// The cuts: hand_over()'s release store of the token, or the requester's acquire exchange
/// (wait_for_token).
struct HandOverRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "hand_over";
};
struct TokenAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "wait_for_token";
};

// The search: random, kIterations executions (each a random schedule, random timeouts and a
// random value the memory model allows each load), the same executions on every run (Relacy
// seeds each from its number). Not exhaustive to a context bound: the case the exchange is
// for needs two preemptions (the unlocker stopped before its unlock so that both sleepers
// are asleep past the bound, and the second requester stopped between its read of the token
// and its take), and every step can also time a sleeper out: the bound of 1 (about a million
// executions) never reaches the case, and each further bound multiplies the count. The
// random search does, thousands of times (the check fails if it does not), and finds each
// negative control within its first hundred executions.
constexpr unsigned long long kIterations = 200'000;

/// Runs one search and says how often it reached the hand-off.
template <class Test>
SearchResult search(const char* name) {
  reached = {};
  SearchResult r = handoff::models::random_search<Test>(name, kIterations);
  std::printf(
      "   executions that handed the lock over: %llu; in which both sleepers asked for it: %llu; in which a "
      "requester found the token sent to it taken by the other: %llu\n",
      reached.handed, reached.both_asked, reached.barged);
  if (!r.refuted && reached.barged == 0) r.unreached = "a requester finding its token taken by the other";
  return r;
}

SearchResult exchange() {
  return search<Handoff<true>>("hand-off token: an unlocker and two starving sleepers; token taken by exchange");
}
SearchResult load_store() { return search<Handoff<false>>("hand-off token: the token taken by a load and a store"); }
SearchResult hand_over_relaxed() {
  return search<Handoff<true, CutAtomics<HandOverRelease>>>("hand-off token: hand_over()'s release made relaxed");
}
SearchResult take_relaxed() {
  return search<Handoff<true, CutAtomics<TokenAcquire>>>("hand-off token: the requester's acquire made relaxed");
}

constexpr Check kChecks[] = {
    {"exchange", exchange, false},
    {"load-store", load_store, true},
    {"hand-over-relaxed", hand_over_relaxed, true},
    {"take-relaxed", take_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
