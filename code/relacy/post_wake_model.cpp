// relacy/post_wake_model: call_soon_threadsafe's post against the callback loop's wait,
// under a relaxed-memory checker (chapter 04, on chapter 03's protocol).
// Role: run the product's own BasicPostQueue (evloop/post_queue.h: its lock and its queued
// flag), WaitFlag (reactor/wait_flag.h, inside the loop's WakeFlag) and the loop's two steps
// before a wait (evloop/event_loop_wait.h, may_block) on Relacy's atomics and mutex, and
// search every interleaving and every value the C++ memory model lets each load read. The
// promise: a loop that blocks has a poke coming. The correct order must hold; the loop that
// re-checks before it raises its flag (WaitOrder::recheck_then_announce) must be refuted,
// and so must the right order without the flag's two fences (WaitFlag's `fences` false),
// which x86 runs without a lost wake as often as not, and each fence cut alone (CutAtomics,
// relacy/relacy_atomics.h): the loop's, in WaitFlag::announce, and the poster's, in
// WaitFlag::claim_poke. With two posting threads the poke is also claimed by one only, and
// with its exchange done as a load and a store (CutAtomics' split) both poke: refuted.
// The Promela model chapters/04-turn-shape/models/post_wake checks the same protocol under
// sequential consistency; this one adds the weak orderings.
//
//   post_wake_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "evloop/event_loop_wait.h"
#include "evloop/post_queue.h"
#include "relacy/lane.h"
#include "reactor/wait_flag.h"

namespace {

using handoff::evloop::HandlePtr;
using handoff::evloop::HandleState;
using handoff::evloop::WaitOrder;
using handoff::models::bounded_search;
using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::full_search;
using handoff::models::Lane;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;

/// The loop's ReadyQueue as a post sees it: only the mark it reads (no local callbacks here).
struct NoLocals {
  std::uint64_t local_count() const noexcept { return 0; }
};

/// The loop's wake as may_block and a post use it: reactor::WakeFlag's calls on its WaitFlag,
/// the socket a Lane.
template <class Flag>
struct Wake {
  explicit Wake(bool fences) : flag(fences) {}
  Flag flag;
  Lane lane;
  void announce_wait() { flag.announce(); }
  void end_wait() { flag.end(); }
  void poke_if_waiting() {
    if (flag.claim_poke()) lane.send();
  }
};

/// may_block against call_soon_threadsafe's wake (Relacy).
///
/// The loop runs may_block (EventLoop::park_allowed) once; a thread posts a callback
/// (EventLoop::call_soon_threadsafe: the queue's push, then the flag's fence and read).
template <WaitOrder Order, bool Fences = true, unsigned Posters = 1, class Atoms = RelacyAtomics>
struct PostWake : rl::test_suite<PostWake<Order, Fences, Posters, Atoms>, Posters + 1> {
  handoff::evloop::BasicPostQueue<Atoms> posts;
  Wake<handoff::reactor::WaitFlag<Atoms>> wake{Fences};
  bool blocks = false;  // written by the loop, read in after() only

  void thread(unsigned id) {
    if (id == 0) {  // the loop
      std::uint64_t announcements = 0;
      const auto no_hook = [] {};
      blocks = handoff::evloop::may_block(Order, wake, posts, no_hook, announcements);
    } else {  // a producer thread
      posts.push(HandlePtr::make(nullptr, HandleState::Holders::any_thread), NoLocals{});
      wake.poke_if_waiting();
    }
  }

  void after() {
    RL_ASSERT(!blocks || wake.lane.left() > 0);  // no lost wake
    RL_ASSERT(wake.lane.left() <= 1);            // one announcement, at most one poke
  }
};

/// The flag's two fences, each cut alone.
struct LoopFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "announce";
};
struct PostFence {
  static constexpr Cut cut = Cut::fence;
  static constexpr const char* function = "claim_poke";
};

/// The exchange that lets only one poster poke, done as a load and a store.
struct PostSplit {
  static constexpr Cut cut = Cut::split;
  static constexpr const char* function = "claim_poke";
};

SearchResult ordered() {
  return full_search<PostWake<WaitOrder::announce_then_recheck>>(
      "post wake: announce, fence, re-check; push, fence, read");
}
SearchResult reversed() {
  return full_search<PostWake<WaitOrder::recheck_then_announce>>(
      "post wake: re-check, then announce; push, fence, read");
}
SearchResult unfenced() {
  return full_search<PostWake<WaitOrder::announce_then_recheck, false>>("post wake: the right order, no fences");
}

// Two posters: exhaustive to a context bound of 3 (the full search of three threads and
// the queue's lock outgrows CTest's budget).
SearchResult two_posters() {
  return bounded_search<PostWake<WaitOrder::announce_then_recheck, true, 2>>(
      "post wake: two threads post and claim; the loop announces once", 3);
}
SearchResult two_posters_split() {
  return bounded_search<PostWake<WaitOrder::announce_then_recheck, true, 2, CutAtomics<PostSplit>>>(
      "post wake: two posters; claim_poke's exchange done as a load and a store", 3);
}
SearchResult loop_unfenced() {
  return full_search<PostWake<WaitOrder::announce_then_recheck, true, 1, CutAtomics<LoopFence>>>(
      "post wake: the loop's fence (WaitFlag::announce) cut");
}
SearchResult post_unfenced() {
  return full_search<PostWake<WaitOrder::announce_then_recheck, true, 1, CutAtomics<PostFence>>>(
      "post wake: the poster's fence (WaitFlag::claim_poke) cut");
}

constexpr Check kChecks[] = {
    {"ordered", ordered, false},
    {"two-posters", two_posters, false},
    {"two-posters-split", two_posters_split, true},
    {"reversed", reversed, true},
    {"unfenced", unfenced, true},
    {"loop-unfenced", loop_unfenced, true},
    {"post-unfenced", post_unfenced, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
