// relacy/elastic_pool_model: the elastic pool's park against its wakes, under a
// relaxed-memory checker (chapter 03).
// Role: run the product's own ElasticPark (pool/elastic_pool_park.h: the parked count, the
// park and the waker), WakeWord (sync/wake_channel.h: the thread's word, its claim and its
// cancel) and MpmcRing on Relacy's atomics, and search every interleaving and every value
// the C++ memory model lets each load read. The futex is left out: a thread that sleeps
// is one whose park said "sleep", and it is woken exactly when a waker's claim moved its
// word to WOKEN (the futex wakes a sleeper once the word has changed; sync/wake_channel.cpp).
// Each promise: a thread that sleeps with work for it (a job, or the stop) has been claimed,
// and the parked count comes back to the threads still asleep. The correct park must hold,
// with one pool thread and with two (rule 2 speaks of every thread); the reversed park and
// the park without its fence must be refuted, and so must each other fence and each half
// of the stop flag's release/acquire, cut alone (CutAtomics, relacy/relacy_atomics.h):
// submit's fence (all_parked_after_push), stop's fence (raise_stop), stop's release store
// (raise_stop) and the park's acquire load of the flag (park). No run-time test refutes the
// fence-less park: on x86 its window is one store wide (ParkFence says why); this model
// finds it in a few executions.
//
//   elastic_pool_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "pool/elastic_pool_park.h"
#include "sync/mpmc_ring.h"
#include "sync/wake_channel.h"

namespace {

using handoff::models::bounded_search;
using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::full_search;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::pool::ParkFence;
using handoff::pool::ParkOrder;
/// The park's test hook between its two steps: nothing here.
constexpr auto kNoHook = [] {};

/// The waker's claim as the model's futex-free wake: ElasticPool::Core::wake_newest passes
/// WakeChannel::wake, which is this claim and then the futex wake.
struct Claim {
  template <class Word>
  bool operator()(Word& word, std::uint32_t seq) const {
    return word.claim_wake(seq);
  }
};

/// A lane of `Threads` pool threads. Each finds the ring empty and parks once
/// (ElasticPool::Core::park); the loop submits a job (ElasticPool::submit: push, then
/// all_parked_after_push(Threads), then wake_newest). Rule 2 wakes only when every thread
/// is parked: with two, a thread not yet counted must find the job itself. The promise: the
/// job is never left in the ring while every thread sleeps unclaimed, and the parked count
/// comes back to the threads still asleep.
template <ParkOrder Order, ParkFence Fence, unsigned Threads = 1, class Atoms = RelacyAtomics>
struct ParkSubmit : rl::test_suite<ParkSubmit<Order, Fence, Threads, Atoms>, Threads + 1> {
  using Word = handoff::sync::WakeWord<Atoms>;
  using Gate = handoff::pool::ElasticPark<Atoms>;
  handoff::sync::MpmcRing<int, Atoms> jobs{4};
  Gate gate;
  Word words[Threads];
  bool sleeps[Threads] = {};  // written by each pool thread, read in after() only

  void thread(unsigned id) {
    constexpr int n = static_cast<int>(Threads);
    if (id == 0) {  // the loop
      const bool pushed = jobs.try_push(1);
      RL_ASSERT(pushed);
      if (gate.all_parked_after_push(n)) gate.wake_newest(words, n, Claim{});
    } else {  // a pool thread
      int job = 0;
      std::uint32_t seq = 0;
      sleeps[id - 1] = gate.park(words[id - 1], jobs, job, Order, Fence, kNoHook, seq) == Gate::Outcome::sleep;
    }
  }

  void after() {
    int asleep = 0;  // threads asleep and unclaimed
    for (unsigned t = 0; t < Threads; ++t) {
      if (sleeps[t] && words[t].kind() != Word::Kind::woken) ++asleep;
    }
    RL_ASSERT(jobs.empty() || asleep < static_cast<int>(Threads));  // no job behind sleeping threads
    RL_ASSERT(gate.parked() == asleep);                             // lowered once per park
  }
};

/// stop() against a park on an empty ring: the loop raises the flag and wakes every parked
/// thread (ElasticPool::stop's send_stop); the thread parks. It must see the stop or be
/// claimed. Broken: either side's fence removed (the park's by ParkFence::none, the stop's
/// own by a CutAtomics).
template <ParkFence Fence, class Atoms = RelacyAtomics>
struct StopPark : rl::test_suite<StopPark<Fence, Atoms>, 2> {
  using Word = handoff::sync::WakeWord<Atoms>;
  using Gate = handoff::pool::ElasticPark<Atoms>;
  handoff::sync::MpmcRing<int, Atoms> jobs{4};
  Gate gate;
  Word words[1];
  bool sleeps = false;

  void thread(unsigned id) {
    if (id == 0) {  // the loop
      gate.raise_stop();
      while (gate.wake_newest(words, 1, Claim{})) {
      }
    } else {  // the pool thread
      int job = 0;
      std::uint32_t seq = 0;
      const auto how = gate.park(words[0], jobs, job, ParkOrder::announce_then_recheck, Fence, kNoHook, seq);
      sleeps = how == Gate::Outcome::sleep;
    }
  }

  void after() {
    const bool woken = words[0].kind() == Word::Kind::woken;
    RL_ASSERT(!sleeps || woken);  // no sleep through the stop
    RL_ASSERT(gate.parked() == ((sleeps && !woken) ? 1 : 0));
  }
};

/// The stop flag's release/acquire: the loop submits a job (ElasticPool::submit: push, then
/// all_parked_after_push and a wake if the thread is parked) and then raises the stop; the
/// thread parks. The promise: a thread that leaves on the stop has left no job in the ring
/// (raise_stop's release store and the park's acquire load of the flag: a thread that sees
/// the flag sees every job pushed before it). The wakes after the stop are StopPark's.
///
/// The release half cannot be refuted alone, and the model shows why: every push is
/// followed by submit's seq_cst fence (all_parked_after_push), which is also a release
/// fence, so a park whose acquire load reads the flag synchronizes with that fence and sees
/// the job even if the flag's store were relaxed (a CutAtomics that relaxes raise_stop's
/// store holds over the whole search). The acquire half is the one the stop relies on.
template <class Atoms = RelacyAtomics>
struct StopDrain : rl::test_suite<StopDrain<Atoms>, 2> {
  using Word = handoff::sync::WakeWord<Atoms>;
  using Gate = handoff::pool::ElasticPark<Atoms>;
  handoff::sync::MpmcRing<int, Atoms> jobs{4};
  Gate gate;
  Word words[1];
  bool left_on_stop = false;

  void thread(unsigned id) {
    if (id == 0) {  // the loop
      const bool pushed = jobs.try_push(1);
      RL_ASSERT(pushed);
      if (gate.all_parked_after_push(1)) gate.wake_newest(words, 1, Claim{});
      gate.raise_stop();
    } else {  // the pool thread
      int job = 0;
      std::uint32_t seq = 0;
      const auto how =
          gate.park(words[0], jobs, job, ParkOrder::announce_then_recheck, ParkFence::seq_cst, kNoHook, seq);
      left_on_stop = how == Gate::Outcome::stop;
    }
  }

  void after() { RL_ASSERT(!left_on_stop || jobs.empty()); }  // no job left behind by a thread that stopped
};

/// The cuts, each removing one fence or one half of a release/acquire pair.
struct SubmitFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "all_parked_after_push";
};
struct StopFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "raise_stop";
};
struct ParkAcquire {  // in park() the only acquire is the load of the stop flag
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "park";
};

SearchResult park_submit() {
  return full_search<ParkSubmit<ParkOrder::announce_then_recheck, ParkFence::seq_cst>>(
      "elastic park: count, announce, fence, re-check; submit: push, fence, read, claim");
}
SearchResult park_reversed() {
  return full_search<ParkSubmit<ParkOrder::recheck_then_announce, ParkFence::seq_cst>>(
      "elastic park: re-check, then announce; submit");
}
SearchResult park_unfenced() {
  return full_search<ParkSubmit<ParkOrder::announce_then_recheck, ParkFence::none>>(
      "elastic park without its fence; submit");
}
SearchResult stop_park() {
  return full_search<StopPark<ParkFence::seq_cst>>("elastic stop: flag, fence, wake all; park");
}
SearchResult stop_unfenced() {
  return full_search<StopPark<ParkFence::none>>("elastic stop against a park without its fence");
}
SearchResult submit_unfenced() {
  return full_search<ParkSubmit<ParkOrder::announce_then_recheck, ParkFence::seq_cst, 1, CutAtomics<SubmitFence>>>(
      "elastic park; submit WITHOUT its fence (all_parked_after_push)");
}
// Two pool threads: exhaustive to a context bound of 3 (the full search of three threads
// outgrows CTest's budget).
SearchResult park_submit_two() {
  return bounded_search<ParkSubmit<ParkOrder::announce_then_recheck, ParkFence::seq_cst, 2>>(
      "elastic park, two pool threads; submit wakes only when both are parked", 3);
}
SearchResult stop_own_unfenced() {
  return full_search<StopPark<ParkFence::seq_cst, CutAtomics<StopFence>>>(
      "elastic stop WITHOUT its own fence (raise_stop) against a fenced park");
}
// The drain: exhaustive to a context bound of 3 (its full search, five million executions,
// takes half a minute here).
SearchResult stop_drain() {
  return bounded_search<StopDrain<>>("elastic stop after a submit: flag (release), fence; park: acquire, re-check", 3);
}
SearchResult park_stop_relaxed() {
  return bounded_search<StopDrain<CutAtomics<ParkAcquire>>>(
      "elastic park: its acquire load of the stop flag made relaxed (park)", 3);
}

constexpr Check kChecks[] = {
    {"park-submit", park_submit, false},        {"park-submit-two-threads", park_submit_two, false},
    {"park-reversed", park_reversed, true},     {"park-unfenced", park_unfenced, true},
    {"submit-unfenced", submit_unfenced, true}, {"stop-park", stop_park, false},
    {"stop-unfenced", stop_unfenced, true},     {"stop-own-unfenced", stop_own_unfenced, true},
    {"stop-drain", stop_drain, false},          {"park-acquire-relaxed", park_stop_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
