// stack/deferred_list: the stack lock's deferred-work list: the slots that hold the items,
// the push of an item onto the held lock word (with the limit), and the holder's run of the
// list it detached at unlock (chapter 05; its own file since issue 26).
// Role: the slots half of the list. The list's head and length live in the lock word
// (stack/stack_lock_word.h), so that "release the lock" and "the list is empty" are one
// atomic fact; the items live here, each slot linked to the one below it in the list by
// index + 1, the numbering the word's head uses. StackLock (stack/stack_lock.h) holds one
// list beside its word and composes the two: lock_or_defer() pushes, unlock() runs.
//
// A difference of representation from Onload (https://github.com/Xilinx-CNS/onload; F5 on
// the book's sources page). Onload links its deferred sockets through the sockets
// themselves (each has a next-id field) and keeps the head, a socket id + 1, in the low bits
// of the word (CI_EPLOCK_NETIF_SOCKET_LIST), with the count in the stack's shared state;
// here the items live in slots of the lock (a deferred send carries its own function and
// arguments, not a socket with pending work), and the count sits in the word beside the
// head, so that the limit is checked by the same CAS that pushes.
//
// Inline on purpose: every function here runs inside StackLock's lock_or_defer() or
// unlock(), in their translation unit, as the code it was before issue 26.
//
// A template over the atomics seam (sync/atomics.h), as the lock word is (issue 39):
// StackLock runs DeferredList<> (std::atomic), and the relaxed-memory model
// (code/relacy/deferred_list_model.cpp) runs this very push and run on Relacy's atomics,
// with the slots in variables the checker follows.
#pragma once

#include <atomic>
#include <cstdint>

#include "stack/stack_lock_word.h"
#include "sync/atomics.h"

namespace handoff::stack {

/// One unit of deferred work: a plain function and its arguments, copied into a slot of the
/// lock (no allocation on the contended path). Runs on the holder's thread, under the lock;
/// it must not take this lock itself.
struct DeferredWork {
  void (*run)(void* context, std::uint64_t a, std::uint64_t b) noexcept = nullptr;
  void* context = nullptr;
  std::uint64_t a = 0;
  std::uint64_t b = 0;
};

/// The deferred-work list's slots. Guarantee: an item pushed runs exactly once, by the
/// holder whose unlock detaches the word's list (run()). Cost: a push is two CASes (a slot,
/// the word) and no syscall; a run is a walk of the links and one fetch_and per item.
template <class Atoms = sync::StdAtomics>
class DeferredList {
 public:
  /// The most items the lock word's list holds (Onload's default deferred-work limit).
  static constexpr std::uint32_t kDeferLimit = 32;

  /// How push() disposed of the work.
  enum class Push {
    took_lock,  ///< the word was free: the caller took the lock (acquire) and runs the work
    pushed,     ///< the word was held: the item is in the list, for the holder to run
    full        ///< kDeferLimit items were queued, or no slot was free: the caller blocks
  };

  /// Push `work` onto the held word, or take the word if it is free. Nothing is left
  /// claimed unless the result is pushed. Always inlined: the loop stays in the body of
  /// lock_or_defer(), every deferring send's path, as it was before issue 26 (GCC would
  /// otherwise call it).
  [[gnu::always_inline]] Push push(LockWord<Atoms>& word, const DeferredWork& work) noexcept {
    using W = LockWord<Atoms>;
    std::uint32_t w = word.look();  // a guess for the CASes, which order
    int slot = -1;
    for (;;) {
      if ((w & W::kLocked) == 0) {
        if (word.try_take(w, 0)) {
          if (slot >= 0) free_slot(static_cast<std::uint32_t>(slot));
          return Push::took_lock;
        }
        continue;
      }
      const std::uint32_t queued = (w & W::kCountMask) >> W::kCountShift;
      if (queued >= kDeferLimit) break;
      if (slot < 0) {
        slot = claim_slot();
        if (slot < 0) break;
        slots_[slot].work = work;
      }
      slots_[slot].next = (w & W::kHeadMask) >> W::kHeadShift;
      const std::uint32_t pushed = (w & ~(W::kHeadMask | W::kCountMask)) |
                                   (static_cast<std::uint32_t>(slot + 1) << W::kHeadShift) |
                                   ((queued + 1) << W::kCountShift);
      // The push's CAS (LockWord::push_deferred: release, and only onto a held word). No
      // ABA hazard, even though slots are reused: the list is only pushed onto, one item at a
      // time, and taken whole, never popped through a link. So the CAS depends on nothing but
      // the word's value: if the word still equals `w` (the holder may have taken the list
      // and a pusher refilled it in a freed slot with the same index meanwhile), its head is
      // the value our link holds and its count is the length of the list under that head,
      // whatever items those are now, and our push keeps both true.
      if (word.push_deferred(w, pushed)) return Push::pushed;
    }
    // The list is full (or every slot is still being run): the caller blocks on the lock.
    if (slot >= 0) free_slot(static_cast<std::uint32_t>(slot));
    return Push::full;
  }

  /// The holder, under the lock: run the list whose head (slot + 1) a release_step() that
  /// said list_taken detached, in the order it was pushed, freeing each slot before its item
  /// runs; `ran()` after each item. Returns how many ran.
  template <class Ran>
  std::uint32_t run(std::uint32_t head, Ran&& ran) noexcept {
    // The list is LIFO (each push goes on top); run it in the order it was pushed.
    std::uint32_t order[kSlots];
    std::uint32_t n = 0;
    for (std::uint32_t at = head; at != 0 && n < kSlots; at = slots_[at - 1].next) order[n++] = at - 1;
    for (std::uint32_t i = n; i-- > 0;) {
      const DeferredWork work = slots_[order[i]].work;
      free_slot(order[i]);
      work.run(work.context, work.a, work.b);
      ran();
    }
    return n;
  }

 private:
  // Slots for deferred items: twice the limit, so that a pusher seldom finds none free
  // while the holder is still running (and freeing) the items it detached.
  static constexpr std::uint32_t kSlots = 2 * kDeferLimit;
  static_assert(kSlots <= 64, "slot bitmap is one 64-bit word");
  static_assert(kSlots < 255, "slot index + 1 fits the word's 8 head bits");

  /// One deferred item in the slot array, linked to the one below it. Plain data, published
  /// by the word's CASes and the slot bitmap (Atoms::plain: a model's checker follows it).
  struct Slot {
    typename Atoms::template plain<DeferredWork> work;
    typename Atoms::template plain<std::uint32_t> next{0};  // the slot below (index + 1; 0 = end)
  };

  int claim_slot() noexcept {
    // relaxed: a guess for the CAS.
    std::uint64_t bits = slot_bits_.load(std::memory_order_relaxed);
    for (;;) {
      if (bits == ~std::uint64_t{0}) return -1;
      const int i = __builtin_ctzll(~bits);
      // acquire: pairs with free_slot()'s release: the holder's read of this slot (the item it
      // ran last) happens-before our writes to it.
      if (slot_bits_.compare_exchange_weak(bits, bits | (std::uint64_t{1} << i), std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
        return i;
      }
    }
  }

  void free_slot(std::uint32_t index) noexcept {
    // release: pairs with claim_slot()'s acquire (see there).
    slot_bits_.fetch_and(~(std::uint64_t{1} << index), std::memory_order_release);
  }

  // Which slots are taken (bit i = slots_[i]); claimed and freed by CAS / fetch_and. On its
  // own line, away from the lock word: every pusher and the running holder touch it.
  alignas(64) typename Atoms::template atomic<std::uint64_t> slot_bits_{0};
  Slot slots_[kSlots];
};

}  // namespace handoff::stack
