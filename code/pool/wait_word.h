// pool/wait_word: the ring pool's wake protocol on its one atomic word: threads announced
// parked and wakes in flight (chapter 02; the stolen credit's return and the chain, chapter 03).
// Changed in chapter 03: the stolen credit's return and the chain.
// Role: every step of the protocol that touches the word, with its fence, in one place, over
// the atomics seam (sync/atomics.h), so that the pool (pool/ring_pool.cpp) and the
// relaxed-memory model (code/relacy/ring_pool_model.cpp) run the same code. The pokes
// themselves (a datagram on the lane socket) are the caller's: a step that says "poke"
// returns true, and the caller sends one.
//
// The word: threads announced parked in the high half, wakes in flight in the low. A waker
// reads both from one load, so they are a pair some instant really had; a woken thread
// leaves both in one step.
#pragma once

#include <cstdint>

#include "sync/announce_order.h"
#include "sync/atomics.h"

namespace handoff::pool {

/// How a thread whose lane poll ate a poke gives the credit back. Only fenced is correct.
/// relaxed_only, the fetch_sub alone, is the broken variant kept as the negative control:
/// on x86 the locked instruction is a full barrier and no run-time test can tell the two
/// apart; the Relacy model (ring_pool_model) refutes it.
enum class CreditReturn { fenced, relaxed_only };

/// The order of a park's two steps (sync/announce_order.h); the reverse is selected by
/// RingPoolSeams::park_order.
using ParkOrder = sync::AnnounceOrder;

/// The ring pool's one wake word: threads parked, and wakes in flight.
template <class Atoms = sync::StdAtomics>
class WaitWord {
 public:
  static constexpr std::uint64_t kOneParked = std::uint64_t{1} << 32;
  static constexpr std::uint64_t kOneWake = 1;
  static int parked_of(std::uint64_t word) noexcept { return static_cast<int>(word >> 32); }
  static int wakes_of(std::uint64_t word) noexcept { return static_cast<int>(word & 0xffff'ffffU); }

  /// Threads announced parked: a snapshot for tests and the harness, ordered by nothing.
  int parked() const noexcept { return parked_of(word_.load(std::memory_order_relaxed)); }

  // [ring.wake]
  /// One wake per parked thread, never one per push: claims a wake (true: the caller pokes)
  /// only while the parked threads outnumber the pokes already on their way. relaxed: the
  /// fence before this call (claim_wake_after_push's, or return_stolen_credit's before
  /// chain_needed) orders the load after the caller's store; the CAS keeps two wakers
  /// from spending one credit twice, and fails (and looks again) if a thread parked or
  /// woke in between.
  bool claim_wake() noexcept {
    std::uint64_t word = word_.load(std::memory_order_relaxed);
    while (parked_of(word) > wakes_of(word)) {
      if (word_.compare_exchange_weak(word, word + kOneWake, std::memory_order_relaxed)) return true;
    }
    return false;
  }
  // [ring.wake]

  /// Submit's half of the store-buffering pair, called right after a successful push: the
  /// push (a release store of the cell's sequence) must be visible before we read the
  /// parked count, a store then a load, which only a seq_cst fence orders. Pairs with the
  /// fence in announce_parked, between announcing and re-checking the ring.
  bool claim_wake_after_push() noexcept {
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    Atoms::fence(std::memory_order_seq_cst);
    return claim_wake();
  }

  /// A parking thread's first step. The announcement must be visible before the thread
  /// looks at the ring again: a store then a load. Pairs with the fence in
  /// claim_wake_after_push. relaxed on the add: the fence does the ordering.
  void announce_parked() noexcept {
    word_.fetch_add(kOneParked, std::memory_order_relaxed);
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    Atoms::fence(std::memory_order_seq_cst);
  }

  /// The re-check found a job: not parking after all. relaxed: the word orders no data.
  void cancel_park() noexcept { word_.fetch_sub(kOneParked, std::memory_order_relaxed); }

  /// A park's first two steps, in the given order, with `between` run between them (a test
  /// hook; a no-op in production): announce (and fence) and re-check the ring. true: the
  /// re-check took a job into `out` and the thread is not parked; false: it is counted
  /// parked and must block until poked.
  template <class Ring, class T, class Hook>
  bool park_or_take(Ring& ring, T& out, ParkOrder order, Hook&& between) {
    if (order == ParkOrder::announce_then_recheck) {
      announce_parked();
      between();
      if (!ring.try_pop(out)) return false;
      cancel_park();  // not parking after all
      return true;
    }
    if (ring.try_pop(out)) return true;
    between();
    announce_parked();
    return false;
  }

  /// A woken thread leaves the parked count and gives back its poke's credit in ONE step
  /// (see RingPoolSeams::UnparkOrder for the two-step variant and why it loses a wake).
  /// relaxed: the word orders no data (the fences around the ring do).
  void leave_park(bool poked) noexcept {
    word_.fetch_sub(kOneParked + (poked ? kOneWake : 0), std::memory_order_relaxed);
  }
  /// The two halves of leave_park, for UnparkOrder::parked_then_credit only (the negative
  /// control). relaxed: as leave_park.
  void leave_parked_count() noexcept { word_.fetch_sub(kOneParked, std::memory_order_relaxed); }
  void give_back_credit() noexcept { word_.fetch_sub(kOneWake, std::memory_order_relaxed); }

  /// A busy thread's lane poll ate a poke sent for a parked sibling: give the credit back.
  /// The thread then looks at the ring (try_pop, then empty() in chain_needed). That is a
  /// store (this RMW) then a load (the ring), against submit's push, fence, load of this
  /// word: the store-buffering shape again, so it needs a seq_cst fence on this side too.
  /// Without it (CreditReturn::relaxed_only), the loop can read the credit still out (no
  /// poke: "a wake is on its way") while this thread reads the ring without the loop's
  /// next job (no chained wake): the job waits behind this thread's, with the sibling
  /// asleep. x86's lock xadd is a full barrier and hides it; on ARMv8 (ldadd, then ldar)
  /// it can happen. Pairs with the fence in claim_wake_after_push.
  void return_stolen_credit(CreditReturn how = CreditReturn::fenced) noexcept {
    word_.fetch_sub(kOneWake, std::memory_order_relaxed);
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    if (how == CreditReturn::fenced) Atoms::fence(std::memory_order_seq_cst);
  }

  /// The chain (WakePolicy::chained), after a thread took a job: if it still sees work in
  /// the ring, it claims a wake for a parked sibling by claim_wake's rule (true: poke). A
  /// stolen credit is passed on by the thread that stole it: its re-read of the ring comes
  /// after return_stolen_credit's fence, so either it sees the loop's next job, or the
  /// loop's read of the word (after its own fence) saw the credit gone and poked itself.
  template <class Ring>
  bool chain_needed(const Ring& ring) noexcept {
    return !ring.empty() && claim_wake();
  }

 private:
  typename Atoms::template atomic<std::uint64_t> word_{0};
};

}  // namespace handoff::pool
