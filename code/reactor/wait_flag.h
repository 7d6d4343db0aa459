// reactor/wait_flag: the atomic half of a loop's wake flag: "I am about to wait", raised by the
// loop and claimed by the one producer that pokes it (chapter 03; over the atomics seam
// since the Relacy models).
// Role: the store-buffering protocol of reactor/wake_flag with no I/O in it, a template over
// the atomics seam (sync/atomics.h), so that WakeFlag (which adds the socket) and the
// relaxed-memory model (code/relacy/loop_flag_model.cpp) run the same code.
#pragma once

#include <atomic>

#include "sync/atomics.h"

namespace handoff::reactor {

/// A loop's "about to wait" flag, claimed by the one producer that pokes it.
template <class Atoms = sync::StdAtomics>
class WaitFlag {
 public:
  /// `fences` false (FOR TESTS AND MODELS ONLY) drops BOTH seq_cst fences: the broken
  /// variant. The flag's store and load stay relaxed either way.
  explicit WaitFlag(bool fences = true) noexcept : fences_(fences) {}

  /// The loop: raise the flag and fence; the caller then re-checks everything a poke
  /// covers. relaxed store: the fence that follows orders it before the re-check's loads.
  /// The fence pairs with the one in claim_poke(), after a producer's push.
  void announce() noexcept {
    flag_.store(true, std::memory_order_relaxed);
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    if (fences_) Atoms::fence(std::memory_order_seq_cst);
  }

  /// The loop: lower the flag (it will not wait after all, or it woke). relaxed: a poke
  /// sent for a wait that ends anyway costs one spurious turn; the queues are drained.
  void end() noexcept { flag_.store(false, std::memory_order_relaxed); }

  /// A producer, after its push (or a pop that makes room): fence, then read the flag; true
  /// when this caller must poke the loop. The fence orders the caller's push (a store)
  /// before the flag's load; pairs with the fence in announce(). exchange: of all the
  /// threads that see the flag raised, exactly one pokes. relaxed (both): the fence orders
  /// the load; the item itself is published by its queue.
  bool claim_poke() noexcept {
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    if (fences_) Atoms::fence(std::memory_order_seq_cst);
    return flag_.load(std::memory_order_relaxed) && flag_.exchange(false, std::memory_order_relaxed);
  }

  /// Whether the flag is raised (for tests: a snapshot, ordered by nothing).
  bool raised() const noexcept { return flag_.load(std::memory_order_relaxed); }

 private:
  const bool fences_;
  typename Atoms::template atomic<bool> flag_{false};
};

}  // namespace handoff::reactor
