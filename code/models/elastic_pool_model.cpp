// models/elastic_pool_model: the elastic pool's park against its wakes, under a
// relaxed-memory checker (chapter 03).
// Role: run the product's own ElasticPark (pool/elastic_pool_park.h: the parked count, the
// park and the waker), WakeWord (sync/wake_channel.h: the thread's word, its claim and its
// cancel) and MpmcRing on Relacy's atomics, and search every interleaving and every value
// the C++ memory model lets each load read. The futex is left out: a thread that sleeps
// is one whose park said "sleep", and it is woken exactly when a waker's claim moved its
// word to WOKEN (the futex wakes a sleeper once the word has changed; sync/wake_channel.cpp).
// Each promise: a thread that sleeps with work for it (a job, or the stop) has been claimed,
// and the parked count comes back to the threads still asleep. The correct park must hold;
// the reversed park and the park without its fence must be refuted. No run-time test
// refutes the fence-less park: on x86 its window is one store wide (ParkFence says why);
// this model finds it in a few executions.
//
//   elastic_pool_model [CHECK]   runs one check by name, or all of them
#include "models/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "pool/elastic_pool_park.h"
#include "sync/mpmc_ring.h"
#include "sync/wake_channel.h"

namespace {

using handoff::models::Check;
using handoff::models::full_search;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::pool::ParkFence;
using handoff::pool::ParkOrder;
using Ring = handoff::sync::MpmcRing<int, RelacyAtomics>;
using Gate = handoff::pool::ElasticPark<RelacyAtomics>;
using Word = handoff::sync::WakeWord<RelacyAtomics>;

/// The waker's claim as the model's futex-free wake: ElasticPool::Core::wake_newest passes
/// WakeChannel::wake, which is this claim and then the futex wake.
constexpr auto claim = [](Word& word, std::uint32_t seq) { return word.claim_wake(seq); };
/// The park's test hook between its two steps: nothing here.
constexpr auto kNoHook = [] {};

/// A lane of one thread (so rule 2's "every thread parked" is "the thread parked"). The
/// thread finds the ring empty and parks (ElasticPool::Core::park); the loop submits a job
/// (ElasticPool::submit: push, then all_parked_after_push, then wake_newest).
template <ParkOrder Order, ParkFence Fence>
struct ParkSubmit : rl::test_suite<ParkSubmit<Order, Fence>, 2> {
  Ring jobs{4};
  Gate gate;
  Word words[1];
  bool sleeps = false;  // written by the pool thread, read in after() only

  void thread(unsigned id) {
    if (id == 0) {  // the loop
      const bool pushed = jobs.try_push(1);
      RL_ASSERT(pushed);
      if (gate.all_parked_after_push(1)) gate.wake_newest(words, 1, claim);
    } else {  // the pool thread
      int job = 0;
      std::uint32_t seq = 0;
      sleeps = gate.park(words[0], jobs, job, Order, Fence, kNoHook, seq) == Gate::Outcome::sleep;
    }
  }

  void after() {
    const bool woken = words[0].kind() == Word::Kind::woken;
    RL_ASSERT(!sleeps || woken);                               // no sleep with the job in the ring
    RL_ASSERT(gate.parked() == ((sleeps && !woken) ? 1 : 0));  // lowered once per park
  }
};

/// stop() against a park on an empty ring: the loop raises the flag and wakes every parked
/// thread (ElasticPool::stop's send_stop); the thread parks. It must see the stop or be
/// claimed.
template <ParkFence Fence>
struct StopPark : rl::test_suite<StopPark<Fence>, 2> {
  Ring jobs{4};
  Gate gate;
  Word words[1];
  bool sleeps = false;

  void thread(unsigned id) {
    if (id == 0) {  // the loop
      gate.raise_stop();
      while (gate.wake_newest(words, 1, claim)) {
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

constexpr Check kChecks[] = {
    {"park-submit", park_submit, false}, {"park-reversed", park_reversed, true}, {"park-unfenced", park_unfenced, true},
    {"stop-park", stop_park, false},     {"stop-unfenced", stop_unfenced, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
