// relacy/ring_pool_model: the ring pool's wake protocols under a relaxed-memory checker
// (chapter 03). Role: run the product's own MpmcRing and WaitWord (pool/wait_word.h) on
// Relacy's atomics and search every interleaving and every value the C++ memory model lets
// each load read; the correct protocol must hold over the whole search, and each broken
// variant must be refuted. x86 cannot refute the stolen credit's unfenced return (its
// locked fetch_sub is a full barrier); this model can. Each of the park's two fences is
// also cut alone (CutAtomics, relacy/relacy_atomics.h): the submit's, in
// claim_wake_after_push, and the park's, in announce_parked.
//
//   ring_pool_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "relacy/lane.h"
#include "pool/wait_word.h"
#include "sync/mpmc_ring.h"

namespace {

using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::full_search;
using handoff::models::Lane;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using handoff::pool::CreditReturn;
using handoff::pool::ParkOrder;
using Ring = handoff::sync::MpmcRing<int, RelacyAtomics>;
using Word = handoff::pool::WaitWord<RelacyAtomics>;

/// The stolen credit. Three pool-side actors, two of them threads:
/// B is parked (counted in the word, asleep in recv; it runs no more in the model), A is
/// busy and about to come back to the ring. The loop submits J1 (B counted parked, no wake
/// out: it claims one and pokes) and J2 (it claims one more only if the first credit is
/// back). A does one pass of thread_main: its lane poll, which may eat J1's poke and return
/// the credit; a pop; and, with a job, the chain. The promise: when everyone has finished,
/// a job still in the ring has a poke in the lane for B. Broken (CreditReturn::relaxed_only):
/// the loop reads the credit still out (so no poke for J2) while A, without a fence after
/// its fetch_sub, reads the ring without J2 (so no chain): J2 waits with B asleep.
// [model.stolen_credit]
template <CreditReturn How>
struct StolenCredit : rl::test_suite<StolenCredit<How>, 2> {
  Ring jobs{4};
  Word word;
  Lane lane;

  void before() { word.announce_parked(); }  // B

  void thread(unsigned id) {
    if (id == 0) {  // the loop: RingPool::submit, twice
      for (int j = 1; j <= 2; ++j) {
        const bool pushed = jobs.try_push(j);
        RL_ASSERT(pushed);
        if (word.claim_wake_after_push()) lane.send();
      }
    } else {  // A: RingPool::Core::thread_main's pass, poll_lane then try_pop then pass_wake_on
      if (lane.try_recv()) word.return_stolen_credit(How);
      int job = 0;
      if (jobs.try_pop(job) && word.chain_needed(jobs)) lane.send();
    }
  }

  void after() { RL_ASSERT(jobs.empty() || lane.left() > 0); }
};
// [model.stolen_credit]

/// Park against submit (chapter 02's store-buffering pair): a pool thread runs the park's
/// two steps (WaitWord::park_or_take) and the loop pushes and reads the word. The promise:
/// a thread that found the ring empty and blocks has a poke coming. Broken
/// (ParkOrder::recheck_then_announce): the re-check runs before the announcement, and a
/// push between them sees no parked thread; or either fence cut (Atoms a CutAtomics).
template <ParkOrder Order, class Atoms = RelacyAtomics>
struct ParkSubmit : rl::test_suite<ParkSubmit<Order, Atoms>, 2> {
  handoff::sync::MpmcRing<int, Atoms> jobs{4};
  handoff::pool::WaitWord<Atoms> word;
  Lane lane;
  bool asleep = false;  // written by the pool thread, read in after() only

  void thread(unsigned id) {
    if (id == 0) {  // the loop: RingPool::submit
      const bool pushed = jobs.try_push(1);
      RL_ASSERT(pushed);
      if (word.claim_wake_after_push()) lane.send();
    } else {  // a pool thread: RingPool::Core::park
      int job = 0;
      asleep = !word.park_or_take(jobs, job, Order, [] {});  // false: it blocks in recv
    }
  }

  void after() { RL_ASSERT(!asleep || lane.left() > 0); }
};

// Exhaustive to a context bound of 6: the full search (HANDOFF_MODEL_FULL=1) runs about
// seven million executions, half a minute or more here, past CTest's budget for all models.
SearchResult stolen_fenced() {
  return handoff::models::bounded_search<StolenCredit<CreditReturn::fenced>>("stolen credit, returned with a fence", 6);
}
SearchResult stolen_relaxed() {
  return full_search<StolenCredit<CreditReturn::relaxed_only>>("stolen credit, returned relaxed, no fence");
}
SearchResult park_submit() {
  return full_search<ParkSubmit<ParkOrder::announce_then_recheck>>("park: announce, fence, re-check; submit");
}
SearchResult park_submit_reversed() {
  return full_search<ParkSubmit<ParkOrder::recheck_then_announce>>("park: re-check, then announce; submit");
}
/// The two fences, each cut alone.
struct SubmitFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "claim_wake_after_push";
};
struct ParkFenceCut {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "announce_parked";
};
SearchResult park_submit_unfenced() {
  return full_search<ParkSubmit<ParkOrder::announce_then_recheck, CutAtomics<SubmitFence>>>(
      "park: announce, fence, re-check; submit WITHOUT its fence (claim_wake_after_push)");
}
SearchResult park_unfenced() {
  return full_search<ParkSubmit<ParkOrder::announce_then_recheck, CutAtomics<ParkFenceCut>>>(
      "park WITHOUT its fence (announce_parked), then re-check; submit");
}

constexpr Check kChecks[] = {
    {"stolen-fenced", stolen_fenced, false},
    {"stolen-relaxed", stolen_relaxed, true},
    {"park-submit", park_submit, false},
    {"park-reversed", park_submit_reversed, true},
    {"submit-unfenced", park_submit_unfenced, true},
    {"park-unfenced", park_unfenced, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
