// relacy/handler_slot_model: a pool thread's HandlerSlot against a bounded stop, under a
// relaxed-memory checker (chapter 01's slot; issue 39).
// Role: run the product's own BasicHandlerSlot (pool/handler_slot.h: enter_handler,
// leave_handler, finish; stop()'s finished() and abandon()) on Relacy's atomics, with a pool
// thread and a stop past its deadline, and search every interleaving and every value the C++
// memory model lets each load read. The thread touches the loop's world (its ThreadStats, a
// plain variable here) before it enters a handler and, if it steps out in time, once more
// before its finish(); stop() frees that world once it has joined a finished thread or
// abandoned one inside its handler (settle_threads). The promises: the thread touches the
// loop's world only before stop() frees it (Relacy reports a data race otherwise), and
// stop() never both abandons the thread and sees it step out.
//
// The negative controls, each one order cut alone (CutAtomics): enter_handler()'s release,
// finish()'s release, abandon()'s acquire, finished()'s acquire. Each must be refuted.
//
//   handler_slot_model [CHECK]   runs one check by name, or all of them
#include "relacy/relacy_atomics.h"
// (first: see relacy_atomics.h)
#include "pool/handler_slot.h"

namespace {

using handoff::models::Check;
using handoff::models::Cut;
using handoff::models::CutAtomics;
using handoff::models::full_search;
using handoff::models::RelacyAtomics;
using handoff::models::SearchResult;

/// A pool thread and a stop past its deadline (Relacy). Thread 0, the pool thread: writes
/// its stats, enters a handler, steps out (leave_handler) and, if not abandoned, writes its
/// stats once more and finishes. Thread 1, stop(): looks at the slot up to twice (finished?
/// else abandon?), and frees the stats when either says so; a third look is another turn of
/// settle_threads, the same two steps again.
template <class Atoms = RelacyAtomics>
struct Settle : rl::test_suite<Settle<Atoms>, 2> {
  handoff::pool::BasicHandlerSlot<Atoms> slot;
  rl::var<int> stats;  // the loop's world the thread touches (its ThreadStats)
  bool stepped_out = false;
  bool abandoned = false;

  void before() { stats($) = 0; }

  void thread(unsigned id) {
    if (id == 0) {
      stats($) = 1;  // the pool's own code, before the handler
      slot.enter_handler();
      // ... the handler runs, touching only the shared core ...
      if (!slot.leave_handler()) return;  // let go of by stop(): touch nothing of the loop's
      stepped_out = true;
      stats($) = 2;  // back in the pool's code; then detach and finish
      slot.finish();
      return;
    }
    for (int look = 0; look < 2; ++look) {
      if (slot.finished()) {
        stats($) = -1;  // joined: stop()'s caller frees the world
        return;
      }
      if (slot.abandon()) {
        abandoned = true;
        stats($) = -1;  // detached inside its handler: the world is freed under it
        return;
      }
    }
  }

  void after() { RL_ASSERT(!(stepped_out && abandoned)); }
};

/// The cuts: each order of the slot alone.
struct EnterRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "enter_handler";
};
struct FinishRelease {
  static constexpr Cut cut = Cut::release;
  static constexpr const char* function = "finish";
};
struct AbandonAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "abandon";
};
struct FinishedAcquire {
  static constexpr Cut cut = Cut::acquire;
  static constexpr const char* function = "finished";
};

// The search: full (every interleaving, every value each load may read); two threads of a
// few steps each.
SearchResult settle() { return full_search<Settle<>>("handler slot: a pool thread and a stop past its deadline"); }
SearchResult enter_relaxed() {
  return full_search<Settle<CutAtomics<EnterRelease>>>("handler slot: enter_handler()'s release made relaxed");
}
SearchResult finish_relaxed() {
  return full_search<Settle<CutAtomics<FinishRelease>>>("handler slot: finish()'s release made relaxed");
}
SearchResult abandon_relaxed() {
  return full_search<Settle<CutAtomics<AbandonAcquire>>>("handler slot: abandon()'s acquire made relaxed");
}
SearchResult finished_relaxed() {
  return full_search<Settle<CutAtomics<FinishedAcquire>>>("handler slot: finished()'s acquire made relaxed");
}

constexpr Check kChecks[] = {
    {"settle", settle, false},
    {"enter-relaxed", enter_relaxed, true},
    {"finish-relaxed", finish_relaxed, true},
    {"abandon-relaxed", abandon_relaxed, true},
    {"finished-relaxed", finished_relaxed, true},
};

}  // namespace

int main(int argc, char** argv) { return handoff::models::run_checks(argc, argv, kChecks); }
