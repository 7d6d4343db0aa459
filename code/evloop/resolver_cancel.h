// evloop/resolver_cancel: a queued lookup's cancelled flag, raised by the loop thread and
// read by the resolver thread that takes the lookup (chapter 04).
// Role: the cancel's one ordering question in one place, a template over the atomics seam
// (sync/atomics.h: its atomic and its mutex), so that the resolver (evloop/resolver.cpp)
// and the relaxed-memory model (code/relacy/resolver_cancel_model.cpp) run the same code.
// The promise it keeps: a lookup cancelled while it waits never reaches the lookup function.
#pragma once

#include <atomic>
#include <mutex>

#include "sync/atomics.h"

namespace handoff::evloop {

/// Where the cancel raises the flag. Only under_lock is correct: a resolver thread reads
/// the flag under the resolver's lock, right after it took the lookup off the queue, and a
/// cancel that takes the same lock is ordered before that take (the lookup is skipped) or
/// after it (it runs, and its result is dropped). outside_lock (a relaxed store with no
/// lock) gives the memory model no edge between the two: the thread may miss a cancel that
/// everything else the loop did afterwards already shows it. Kept as the negative control
/// (ResolverOptions::cancel_store, the resolver's tests, the model).
enum class CancelStore { under_lock, outside_lock };

/// A queued lookup's cancelled flag: raised by the loop, read by the thread that takes it.
template <class Atoms = sync::StdAtomics>
class CancelFlag {
 public:
  using Mutex = typename Atoms::mutex;

  /// The loop thread: raise the flag. `takes` is the lock resolver threads take lookups
  /// under. relaxed (both ways): with under_lock the lock orders the store with every take;
  /// outside_lock is the broken variant, which nothing orders.
  void raise(Mutex& takes, CancelStore where) noexcept {
    if (where == CancelStore::under_lock) {
      std::lock_guard lock(takes);
      flag_.store(true, std::memory_order_relaxed);
    } else {
      flag_.store(true, std::memory_order_relaxed);
    }
  }

  /// A resolver thread, holding the lock, having just taken the lookup: whether it was
  /// cancelled (skip it). relaxed: the lock orders this read with raise()'s store.
  bool seen_by_taker() const noexcept { return flag_.load(std::memory_order_relaxed); }

  /// The loop thread: whether it cancelled the lookup. relaxed: its own store.
  bool raised() const noexcept { return flag_.load(std::memory_order_relaxed); }

 private:
  // An atomic although the lock orders it: raised() reads it without the lock, and the
  // negative control's unlocked store stays free of a data race.
  typename Atoms::template atomic<bool> flag_{false};
};

}  // namespace handoff::evloop
