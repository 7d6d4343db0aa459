// relacy/deferred_list_model: the stack lock's deferred-work list under a relaxed-memory
// checker (chapter 05; issue 39).
// Role: run the product's own DeferredList (stack/deferred_list.h: the slots, the push onto
// the held word, the holder's run) and LockWord (stack/stack_lock_word.h: the push's CAS and
// the unlock's steps) on Relacy's atomics, with a holder and two threads that defer work to
// it, and search the interleavings and every value the C++ memory model lets each load read.
// The promises: every item pushed runs exactly once, by the holder that detaches it or by
// its pusher when the word was free (none is stranded in a released word), and the holder
// that runs an item sees what its pusher wrote before the push (Relacy reports a data race
// on the payload otherwise). That rests on the push's release CAS (push_deferred) and the
// unlock's acquire CAS that takes the list (release_step); each, cut alone (CutAtomics), is
// refuted. The slots' own reuse is checked too: the slots are variables the checker follows
// (Atoms::plain), and a pusher that claims the slot of an item the holder has just run
// writes it only after the holder's read of it, by the slot bitmap's release (free_slot) and
// acquire (claim_slot); each, cut alone, is refuted as a data race on the slot.
//
//   deferred_list_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "stack/deferred_list.h"
#include "stack/stack_lock_word.h"

namespace {

using handoff::models::bounded_search;
using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::stack::DeferredWork;
using handoff::stack::ReleaseBy;

/// A holder and two deferring threads (Relacy). Thread 0 holds the lock (taken in
/// before()) and unlocks it as StackLock::unlock does with no sleepers and no hand-off:
/// release_step, running each list it detaches, until the word is released. Threads 1 and
/// 2 each write a payload and defer a work item that reads it (StackLock::lock_or_defer:
/// push, or take the free lock, run the item and unlock).
template <class Atoms>
struct Defer : rl::test_suite<Defer<Atoms>, 3> {
  using Word = handoff::stack::LockWord<Atoms>;
  Word word;
  handoff::stack::DeferredList<Atoms> list;
  rl::var<int> payload[2];  // written by each pusher before its push
  int seen[2] = {};         // what the item read, and how often it ran: read in after() only
  int runs[2] = {};

  static void work(void* context, std::uint64_t item, std::uint64_t) noexcept {
    auto* self = static_cast<Defer*>(context);
    self->seen[item] = self->payload[item]($);  // Relacy: a data race unless ordered after the write
    ++self->runs[item];
  }

  void before() {
    std::uint32_t w = word.look();
    const bool held = word.try_take(w, 0);  // thread 0 holds the lock
    RL_ASSERT(held);
  }

  void unlock() {
    std::uint32_t w = word.look();
    const auto nothing_before_release = [] {};
    for (;;) {
      const auto step = word.release_step(w, nothing_before_release, ReleaseBy::compare_exchange);
      if (step == Word::Step::released) return;
      RL_ASSERT(step == Word::Step::list_taken);  // no hand-off here
      list.run((w & Word::kHeadMask) >> Word::kHeadShift, [] {});
      w = word.look();
    }
  }

  void thread(unsigned id) {
    if (id == 0) {
      unlock();
      return;
    }
    const std::uint64_t item = id - 1;
    payload[item]($) = static_cast<int>(id);
    const DeferredWork deferred{&Defer::work, this, item, 0};
    const auto how = list.push(word, deferred);
    RL_ASSERT(how != handoff::stack::DeferredList<Atoms>::Push::full);  // two items, a limit of 32
    if (how == handoff::stack::DeferredList<Atoms>::Push::took_lock) {
      work(this, item, 0);
      unlock();
    }
  }

  void after() {
    for (int i = 0; i < 2; ++i) {
      RL_ASSERT(runs[i] == 1);      // exactly once: none stranded, none run twice
      RL_ASSERT(seen[i] == i + 1);  // and it saw its payload
    }
    RL_ASSERT(word.look() == 0);  // released, with an empty list
  }
};

/// The cuts: the push's release CAS, or the acquire of the CAS that takes the list.
struct PushRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "push_deferred";
};
struct TakeAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "release_step";
};

/// The slot bitmap's cuts: the holder's release of a slot it has read, or the pusher's
/// acquire of the slot it claims.
struct FreeRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "free_slot";
};
struct ClaimAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "claim_slot";
};

// Exhaustive to a context bound of 3: three threads, each through several CASes, make a
// full search too long for CTest's budget.
constexpr unsigned kBound = 3;

SearchResult deferred() {
  return bounded_search<Defer<RelacyAtomics>>("deferred list: two pushers, a holder that runs the list", kBound);
}
SearchResult push_relaxed() {
  return bounded_search<Defer<CutAtomics<PushRelease>>>("deferred list: the push's CAS made relaxed", kBound);
}
SearchResult take_relaxed() {
  return bounded_search<Defer<CutAtomics<TakeAcquire>>>("deferred list: the list's take made relaxed", kBound);
}

SearchResult free_relaxed() {
  return bounded_search<Defer<CutAtomics<FreeRelease>>>("deferred list: the slot's release (free_slot) made relaxed",
                                                        kBound);
}
SearchResult claim_relaxed() {
  return bounded_search<Defer<CutAtomics<ClaimAcquire>>>("deferred list: the slot's acquire (claim_slot) made relaxed",
                                                         kBound);
}

constexpr Check kChecks[] = {
    {"deferred", deferred, false},        {"push-relaxed", push_relaxed, true},   {"take-relaxed", take_relaxed, true},
    {"free-relaxed", free_relaxed, true}, {"claim-relaxed", claim_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
