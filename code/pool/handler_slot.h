// pool/handler_slot: who owns a pool thread while it runs a handler, so that a bounded
// stop can let go of a thread stuck in one (chapter 01).
// Role: a stop whose deadline has passed must neither wait for a handler nor pull the
// state a pool thread touches from under it. A HandlerSlot is the token that decides, for
// one thread, whether it or stop() moves first; settle_threads() is stop()'s wait, and
// start_pool_threads() the start every pool's threads go through (one home since issue 26).
//
// The slot is a template over the atomics seam (sync/atomics.h), as the wait words are
// (issue 39): the pools run HandlerSlot (BasicHandlerSlot<>, std::atomic), and the
// relaxed-memory model (code/relacy/handler_slot_model.cpp) runs this very slot on Relacy's.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "stats/thread_cpu.h"
#include "stats/thread_stats.h"
#include "sync/atomics.h"

namespace handoff::pool {

/// One pool thread's state as stop() sees it. While the thread is inside a handler it
/// touches nothing of the pool's but what the pool keeps alive for it (the shared core:
/// rings, sockets, flags); while it is in the pool's own code it may touch the loop's
/// world (its ThreadStats in the registry). stop() may abandon a thread only inside a
/// handler, and the thread learns of it the next time it tries to step out.
///
/// Cost: one release store and one CAS per handler call and per frame the handler emits.
template <class Atoms = sync::StdAtomics>
class BasicHandlerSlot {
 public:
  /// Thread: about to call into the handler. release: pairs with the acquire of stop()'s
  /// abandon(): everything the thread did in the pool's code (counters in a registry stop's
  /// caller may free) happens before stop() lets it go.
  void enter_handler() noexcept { state_.store(kInHandler, std::memory_order_release); }
  /// Thread: back in the pool's code (to emit a frame, or the handler returned). False
  /// when stop() abandoned the thread meanwhile: it must then touch nothing outside the
  /// shared core. relaxed: on success, what the thread touches next is published to stop()
  /// by its next enter_handler() or finish() (both release); on failure it touches nothing
  /// that stop() or its caller owns, so there is nothing to order.
  bool leave_handler() noexcept {
    int expected = kInHandler;
    return state_.compare_exchange_strong(expected, kInPool, std::memory_order_relaxed, std::memory_order_relaxed);
  }
  /// Thread: its last act before it returns (it has detached its stats). release: pairs
  /// with the acquire in finished(), so stop() joins a thread that is done with the pool.
  void finish() noexcept { state_.store(kFinished, std::memory_order_release); }

  /// stop(): true when the thread is done and can be joined. acquire: pairs with finish().
  bool finished() const noexcept { return state_.load(std::memory_order_acquire) == kFinished; }
  /// stop(), past its deadline: let go of the thread if it is inside a handler; true if it
  /// was. acq_rel: the acquire pairs with enter_handler's release (see there); the release
  /// side orders nothing the thread reads (it reads only the state itself).
  bool abandon() noexcept {
    int expected = kInHandler;
    return state_.compare_exchange_strong(expected, kAbandoned, std::memory_order_acq_rel, std::memory_order_relaxed);
  }

 private:
  static constexpr int kInPool = 0, kInHandler = 1, kAbandoned = 2, kFinished = 3;
  typename Atoms::template atomic<int> state_{kInPool};
};
using HandlerSlot = BasicHandlerSlot<>;

/// A pool's start, the same for every pool: for each of its `count` threads, the ThreadStats
/// "pool-W-i" in `registry` (W: the worker's index, i: the thread's), and a thread that runs
/// `body(i, stats)`. `body` is copied into each thread, so it holds what the thread shares
/// with the pool by value (the pool's core) and nothing of the loop's.
template <class Body>
void start_pool_threads(std::vector<std::thread>& threads, int count, int worker_index, stats::Registry& registry,
                        Body body) {
  for (int i = 0; i < count; ++i) {
    stats::ThreadStats& st = registry.add("pool-" + std::to_string(worker_index) + "-" + std::to_string(i), "pool");
    threads.emplace_back([body, i, &st] { body(static_cast<std::size_t>(i), st); });
  }
}

/// stop()'s wait for its threads: join every thread that has finished; once `deadline_ns`
/// (monotonic) has passed, call `at_deadline` once and from then on detach every thread
/// that is inside a handler. `turn` runs between looks and must keep the threads moving
/// (drain their frames, feed their lane) and wait at most a few milliseconds. A thread in
/// the pool's own code always reaches a pill or a handler in bounded time, so this returns
/// soon after the deadline whatever the handlers do.
template <class AtDeadline, class Turn>
void settle_threads(std::vector<std::thread>& threads, HandlerSlot* slots, std::int64_t deadline_ns,
                    AtDeadline at_deadline, Turn turn) {
  std::vector<bool> settled(threads.size(), false);
  std::size_t left = threads.size();
  bool past = false;
  while (left > 0) {
    for (std::size_t i = 0; i < threads.size(); ++i) {
      if (settled[i]) continue;
      if (slots[i].finished()) {
        threads[i].join();
      } else if (past && slots[i].abandon()) {
        threads[i].detach();  // it keeps the shared core alive; what it emits goes nowhere
      } else {
        continue;
      }
      settled[i] = true;
      --left;
    }
    if (left == 0) break;
    if (!past && stats::monotonic_ns() >= deadline_ns) {
      past = true;
      at_deadline();
      continue;
    }
    turn();
  }
  threads.clear();
}

}  // namespace handoff::pool
