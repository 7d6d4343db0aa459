// stack/stack_lock_word: the stack lock's word and every decision made by a CAS on it: the
// take, the waiter's NEED_WAKE, the unlock's list, hand-off and release (chapter 05).
// Role: the atomic half of stack/stack_lock, with no futex, hook, clock or counter in it, a
// template over the atomics seam (sync/atomics.h), so that StackLock and the relaxed-memory
// model (code/relacy/stack_lock_model.cpp) run the same code. The sleeps and wakes (the
// futex calls) are stack/lock_sleeper.h's, the deferred list's slots stack/deferred_list.h's,
// and StackLock (stack/stack_lock.h) composes the three.
//
// The word: LOCKED, NEED_WAKE and HANDOFF_WANTED bits, and the deferred list's head and
// length (stack/stack_lock.h says why one word). No wake is lost because the waiter's
// NEED_WAKE and the unlock's release are both CASes on this word: the word's modification
// order puts one before the other. Either the release read NEED_WAKE (and the unlocker
// wakes a sleeper) or the flagging CAS came after the release, found LOCKED gone, failed,
// and the waiter looks again; and FUTEX_WAIT sleeps only while the word still holds what
// the waiter flagged.
#pragma once

#include <atomic>
#include <cstdint>

#include "sync/atomics.h"

namespace handoff::stack {

/// How unlock's last step releases the word. Only compare_exchange is correct, and the
/// lock always passes it; store (a plain release store of 0, after the load the step looked
/// at) is the broken variant FOR THE MODEL ONLY (code/relacy/stack_lock_model.cpp refutes
/// it): a NEED_WAKE flagged, or an item pushed, between that load and the store is wiped
/// out, and its sleeper (or its work) waits for an unlock that may never come.
enum class ReleaseBy { compare_exchange, store };

/// The stack lock's word and every CAS on it.
template <class Atoms = sync::StdAtomics>
class LockWord {
 public:
  static constexpr std::uint32_t kLocked = 1U << 0;         ///< someone holds the lock
  static constexpr std::uint32_t kNeedWake = 1U << 1;       ///< a waiter may sleep on the word
  static constexpr std::uint32_t kHandoffWanted = 1U << 2;  ///< a starving waiter asks for it
  static constexpr unsigned kHeadShift = 8;                 ///< bits 8..15: list head, slot + 1
  static constexpr std::uint32_t kHeadMask = 0xffU << kHeadShift;
  static constexpr unsigned kCountShift = 16;  ///< bits 16..23: list length
  static constexpr std::uint32_t kCountMask = 0xffU << kCountShift;

  /// The word now. relaxed: a guess for the CASes below, which order; or a snapshot.
  std::uint32_t look() const noexcept { return word_.load(std::memory_order_relaxed); }

  /// Take the lock from the word `w` was read as, adding `extra` bits, if `w` is free. On
  /// failure `w` holds the word's fresh value. acquire: pairs with the release of the CAS
  /// in release_step() that cleared LOCKED: the last holder's critical section, and the
  /// deferred work it ran, happen-before ours. Failure: relaxed, the caller only looks again.
  bool try_take(std::uint32_t& w, std::uint32_t extra) noexcept {
    if ((w & kLocked) != 0) return false;
    return word_.compare_exchange_strong(w, w | kLocked | extra, std::memory_order_acquire, std::memory_order_relaxed);
  }

  /// What a waiter on the sleeping path does next (take_or_flag()).
  enum class Look { took, handoff_requested, sleep };

  // [stack_lock_word.wait]
  /// A waiter on the sleeping path: take the lock if it is free (adding `take_extra`), or
  /// raise HANDOFF_WANTED (with NEED_WAKE) when `wants_handoff()` says this waiter has
  /// starved, or make sure NEED_WAKE is set. took: the caller holds the lock.
  /// handoff_requested: the caller owns the request and waits for the hand-off token.
  /// sleep: the caller must FUTEX_WAIT on the word as `w` (NEED_WAKE set in it), then call
  /// again. Each CAS that fails looks again.
  template <class WantsHandoff>
  Look take_or_flag(std::uint32_t& w, std::uint32_t take_extra, WantsHandoff&& wants_handoff) noexcept {
    for (;;) {
      w = look();
      if ((w & kLocked) == 0) {
        if (try_take(w, take_extra)) return Look::took;
        continue;
      }
      if ((w & kHandoffWanted) == 0 && wants_handoff()) {
        // relaxed: the bit is a request, not a publication; whoever's CAS sets it owns the
        // request. The lock itself passes through the hand-off token (release/acquire there).
        if (word_.compare_exchange_strong(w, w | kHandoffWanted | kNeedWake, std::memory_order_relaxed,
                                          std::memory_order_relaxed)) {
          return Look::handoff_requested;
        }
        continue;
      }
      if ((w & kNeedWake) == 0) {
        // relaxed: the flag is read by the unlocker's own CAS on this word (the word's
        // modification order decides whether it saw the flag); nothing else is published.
        if (!word_.compare_exchange_strong(w, w | kNeedWake, std::memory_order_relaxed, std::memory_order_relaxed)) {
          continue;
        }
        w |= kNeedWake;
      }
      return Look::sleep;
    }
  }
  // [stack_lock_word.wait]

  /// A deferring thread: push the list head and length in `pushed` onto the held word `w`.
  /// On failure `w` holds the fresh word. release: pairs with release_step()'s acquire CAS
  /// that takes the list: the slot's work and link written before the push are visible to
  /// the holder that runs them. The CAS compares the whole word, so it succeeds only while
  /// LOCKED is set: the item cannot be stranded in a released word.
  bool push_deferred(std::uint32_t& w, std::uint32_t pushed) noexcept {
    return word_.compare_exchange_strong(w, pushed, std::memory_order_release, std::memory_order_relaxed);
  }

  /// What one step of an unlock did (release_step()).
  enum class Step { list_taken, handoff_withdrawn, released };

  /// The holder's unlock, from the guess `w`, up to its next act: list_taken (the deferred
  /// list is detached; `w` is the word that held it: run it, then look() and call again),
  /// handoff_withdrawn (HANDOFF_WANTED cleared, LOCKED kept: publish the token and wake the
  /// requester) or released (`w` is the word released: wake a sleeper if it says
  /// NEED_WAKE). `before_release` runs each time the list is found empty, just before the
  /// word's last CAS (StackLockOptions::before_release). A failed CAS looks again.
  // [stack_lock_word.release]
  template <class BeforeRelease>
  Step release_step(std::uint32_t& w, BeforeRelease&& before_release, ReleaseBy how) noexcept {
    for (;;) {
      if ((w & kHeadMask) != 0) {
        // Take the whole list, keeping LOCKED and the flags. acquire: pairs with each
        // pusher's release CAS in push_deferred() (a later pusher's CAS continues the
        // earlier one's release sequence), so every slot's work and link are visible.
        const std::uint32_t held = w;
        if (word_.compare_exchange_strong(w, w & ~(kHeadMask | kCountMask), std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
          w = held;
          return Step::list_taken;
        }
        continue;
      }
      // The list is empty: the owner's last act as holder. If a push lands before the CAS
      // below, the loop takes it and the caller comes here again.
      before_release();
      if ((w & kHandoffWanted) != 0) {
        // Keep LOCKED (and NEED_WAKE for the other sleepers); withdraw the request. relaxed:
        // the requester learns of the hand-off from the token, not from this word.
        if (word_.compare_exchange_strong(w, w & ~kHandoffWanted, std::memory_order_relaxed,
                                          std::memory_order_relaxed)) {
          return Step::handoff_withdrawn;
        }
        continue;
      }
      if (how == ReleaseBy::store) {  // the broken variant (see ReleaseBy)
        word_.store(0, std::memory_order_release);
        return Step::released;
      }
      // Release: only from a word with an empty list and no request, compared whole, so a
      // push or a NEED_WAKE that lands after our load fails the CAS and we look again.
      // release: pairs with the next taker's acquire CAS (try_take).
      if (word_.compare_exchange_strong(w, 0, std::memory_order_release, std::memory_order_relaxed)) {
        return Step::released;
      }
    }
  }
  // [stack_lock_word.release]

  /// The atomic itself, for the futex calls on it (the product's) or a model's stand-in.
  typename Atoms::template atomic<std::uint32_t>& atom() noexcept { return word_; }

 private:
  typename Atoms::template atomic<std::uint32_t> word_{0};
};

}  // namespace handoff::stack
