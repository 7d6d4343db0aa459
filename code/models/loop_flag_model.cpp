// models/loop_flag_model: the loop's wake flag under a relaxed-memory checker (chapter 03).
// Role: run the product's own WaitFlag (reactor/wait_flag.h, the protocol inside WakeFlag,
// which the completion ring's frames and the callback loop's call_soon_threadsafe both wake
// their loop through) against the product's MpmcRing on Relacy's atomics, and search every
// interleaving and every value the C++ memory model lets each load read. The fenced flag
// must hold; the fence-less one (WakeFlag's `fences` false) must be refuted.
//
//   loop_flag_model [CHECK]   runs one check by name, or all of them
#include "models/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "models/lane.h"
#include "reactor/wait_flag.h"
#include "sync/mpmc_ring.h"

namespace {

using handoff::models::Check;
using handoff::models::full_search;
using handoff::models::Lane;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;
using Ring = handoff::sync::MpmcRing<int, RelacyAtomics>;
using Flag = handoff::reactor::WaitFlag<RelacyAtomics>;

/// A loop's flag against a producer's poke (Relacy).
///
/// The loop raises its flag and re-checks its queue (RingPool::ready_to_wait,
/// EventLoop::park_allowed); if the queue looks empty it blocks in epoll. A producer pushes
/// an item (a frame, a post) and claims the poke. The promise: a loop that blocks has a poke coming (or no
/// item is left behind). (One producer: with two, the full search of the ring's CASes
/// outgrows a CI step; the exchange that lets only one of them poke is not searched here.)
template <bool Fences>
struct LoopFlag : rl::test_suite<LoopFlag<Fences>, 2> {
  Ring items{4};
  Flag flag{Fences};
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

  void after() { RL_ASSERT(!asleep || lane.left() > 0); }
};

SearchResult fenced() { return full_search<LoopFlag<true>>("loop flag: announce, fence, re-check; push, fence, read"); }
SearchResult unfenced() { return full_search<LoopFlag<false>>("loop flag without its fences"); }

constexpr Check kChecks[] = {
    {"fenced", fenced, false},
    {"unfenced", unfenced, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
