// relacy/loop_flag_model: the loop's wake flag under a relaxed-memory checker (chapter 03).
// Role: run the product's own WaitFlag (reactor/wait_flag.h, the protocol inside WakeFlag,
// which the completion ring's frames and the callback loop's call_soon_threadsafe both wake
// their loop through) against the product's MpmcRing on Relacy's atomics, and search every
// interleaving and every value the C++ memory model lets each load read. The fenced flag
// must hold, with one producer and with two (of which only one may poke); the fence-less
// one (WakeFlag's `fences` false) must be refuted, and so must each fence cut alone
// (CutAtomics, relacy/relacy_atomics.h): the loop's, in announce(), and the producer's, in
// claim_poke(); and claim_poke()'s exchange done as a load and a store, which lets both
// producers poke for one wait.
//
//   loop_flag_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "relacy/lane.h"
#include "reactor/wait_flag.h"
#include "sync/mpmc_ring.h"

namespace {

using handoff::models::bounded_search;
using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::full_search;
using handoff::models::Lane;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;

/// A loop's flag against a producer's poke (Relacy).
///
/// The loop raises its flag and re-checks its queue (RingPool::ready_to_wait,
/// EventLoop::park_allowed); if the queue looks empty it blocks in epoll. A producer pushes
/// an item (a frame, a post) and claims the poke. The promises: a loop that blocks has a
/// poke coming, and of `Producers` producers at most one pokes (claim_poke's exchange).
/// Atoms is RelacyAtomics, or a CutAtomics that removes one fence.
template <bool Fences, unsigned Producers = 1, class Atoms = RelacyAtomics>
struct LoopFlag : rl::test_suite<LoopFlag<Fences, Producers, Atoms>, Producers + 1> {
  handoff::sync::MpmcRing<int, Atoms> items{4};
  handoff::reactor::WaitFlag<Atoms> flag{Fences};
  Lane lane;  // the loop's socket (or eventfd)
  bool asleep = false;

  void thread(unsigned id) {
    if (id == 0) {  // the loop
      flag.announce();
      if (items.empty()) {
        asleep = true;  // blocks in epoll_wait
      } else {
        flag.end();  // completions wait: poll without blocking
      }
    } else {  // a producer: push, then WakeFlag::poke_if_waiting
      const bool pushed = items.try_push(static_cast<int>(id));
      RL_ASSERT(pushed);
      if (flag.claim_poke()) lane.send();
    }
  }

  void after() {
    RL_ASSERT(!asleep || lane.left() > 0);  // no lost wake
    RL_ASSERT(lane.left() <= 1);            // one announcement, at most one poke
  }
};

/// The two fences, each cut alone.
struct LoopFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "announce";
};
struct PokeFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "claim_poke";
};

/// The exchange that lets only one producer poke, done as a load and a store.
struct PokeSplit {
  static constexpr Cut cut = Cut::split;
  static constexpr const char* function = "claim_poke";
};

SearchResult fenced() { return full_search<LoopFlag<true>>("loop flag: announce, fence, re-check; push, fence, read"); }
// Two producers: exhaustive to a context bound of 3 (the full search of the ring's CASes
// for three threads outgrows CTest's budget).
SearchResult two_producers() {
  return bounded_search<LoopFlag<true, 2>>("loop flag: two producers push and claim; one loop announces", 3);
}
SearchResult two_producers_split() {
  return bounded_search<LoopFlag<true, 2, CutAtomics<PokeSplit>>>(
      "loop flag: two producers; claim_poke's exchange done as a load and a store", 3);
}
SearchResult unfenced() { return full_search<LoopFlag<false>>("loop flag without its fences"); }
SearchResult loop_unfenced() {
  return full_search<LoopFlag<true, 1, CutAtomics<LoopFence>>>("loop flag: the loop's fence (announce) cut");
}
SearchResult poke_unfenced() {
  return full_search<LoopFlag<true, 1, CutAtomics<PokeFence>>>("loop flag: the producer's fence (claim_poke) cut");
}

constexpr Check kChecks[] = {
    {"fenced", fenced, false},
    {"two-producers", two_producers, false},
    {"two-producers-split", two_producers_split, true},
    {"unfenced", unfenced, true},
    {"loop-unfenced", loop_unfenced, true},
    {"poke-unfenced", poke_unfenced, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
