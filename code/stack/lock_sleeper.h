// stack/lock_sleeper: how a stack-lock waiter that found the lock held gets it: the buzz (a
// try-lock spin), then the futex sleep flagged by NEED_WAKE, and in the hand-off variant the
// token a starving waiter sleeps on and the unlocker publishes (chapter 05; its own file
// since issue 26).
// Role: every futex call the stack lock makes, through the project's one wrapper
// (sync/futex.h), around the CASes of the lock word (stack/stack_lock_word.h), which decide.
// StackLock (stack/stack_lock.h) holds one sleeper beside its word and composes them: lock()
// falls back to buzz() and sleep(), unlock() ends in wake_one() or hand_over().
//
// The futex calls. A wake may run after the lock word has been released and even reused by
// another holder: one that finds nobody waiting is harmless, and a stray wake is one that
// every waiter's loop already tolerates. The lock must outlive every thread that uses it,
// as for any lock.
//
// The hand-off token (handoff_after_ns > 0): 1 = "the lock is yours", read by the one thread
// that owns the current HANDOFF_WANTED request; its own futex word, so the unlocker wakes
// exactly that thread, and a buzzing thread, which sees LOCKED the whole time, cannot barge
// in.
//
// Inline on purpose: buzz() and sleep() run inside StackLock's lock_slow(), in its
// translation unit, as the code they were before issue 26.
//
// A template over the atomics seam (sync/atomics.h), futex calls included, as the lock word
// is (issue 39): StackLock runs LockSleeper<> (std::atomic, the real futex, the monotonic
// clock), and the relaxed-memory models run this very sleep() with Relacy's atomics, its
// modelled futex and a clock the model moves (code/relacy/stack_lock_model.cpp: the futex
// sleep; code/relacy/handoff_token_model.cpp: the hand-off token).
#pragma once

#include <atomic>
#include <cstdint>

#include "stack/stack_lock_word.h"
#include "sync/atomics.h"
#include "sync/spin_wait.h"

namespace handoff::stack {

/// The points a test may stop a thread at (StackLockHooks, stack/stack_lock.h). Production
/// passes no hooks. Most are the sleeper's; released and defer_full are StackLock's.
enum class StackLockPoint {
  before_sleep,        ///< a waiter flagged NEED_WAKE and is about to FUTEX_WAIT on the word
  woken,               ///< a waiter's FUTEX_WAIT returned; it has not re-read the word yet
  handoff_requested,   ///< a starving waiter set HANDOFF_WANTED and will sleep for the hand-off
  handoff_received,    ///< a requester was handed the lock (it owns it now)
  defer_full,          ///< lock_or_defer found kDeferLimit items queued and will block instead
  released,            ///< unlock's releasing CAS succeeded; the wake (if any) is not yet sent
  handoff_wait,        ///< a requester is about to read the hand-off token (each look)
  handoff_token_read,  ///< a requester has read (or taken) the token; it has not acted on it yet
  handoff_sleep,       ///< a requester found no token and is about to FUTEX_WAIT for one
};

/// A waiter's buzz and sleep, and the hand-off token. Guarantee: sleep() returns only once
/// the caller holds the lock; no wake is lost (see stack/stack_lock_word.h). Cost: the buzz
/// is a try-lock per cpu_relax() for up to buzz_ns; the sleep a FUTEX_WAIT per wake.
template <class Atoms = sync::StdAtomics>
class LockSleeper {
 public:
  using Word = LockWord<Atoms>;

  /// Buzz: try-lock on our core, no syscall, for `buzz_ns` (for ever when -1; not at all
  /// when 0). true: the caller holds the lock.
  // [lock_sleeper.buzz]
  static bool buzz(Word& word, std::int64_t buzz_ns) noexcept {
    if (buzz_ns == 0) return false;
    const std::int64_t start = Atoms::now_ns();
    for (;;) {
      std::uint32_t w = word.look();  // a look before the CAS, which orders
      if (word.try_take(w, 0)) return true;
      if (buzz_ns > 0 && Atoms::now_ns() - start >= buzz_ns) return false;
      sync::cpu_relax();
    }
  }
  // [lock_sleeper.buzz]

  /// After the buzz: sleep on the word until the caller holds the lock. `sleeps` counts
  /// the FUTEX_WAITs; `at(point)` runs at each StackLockPoint reached. Returns true when the
  /// lock was handed over (handoff_after_ns > 0), false when the caller's CAS took it.
  // [lock_sleeper.sleep]
  template <class At>
  bool sleep(Word& word, std::int64_t handoff_after_ns, bool take_by_exchange, std::uint32_t& sleeps,
             At&& at) noexcept {
    // Flag NEED_WAKE in the word, FUTEX_WAIT on it as flagged (LockWord::take_or_flag).
    std::int64_t first_sleep_ns = 0;
    const auto starved = [&] {
      return handoff_after_ns > 0 && sleeps > 0 && Atoms::now_ns() - first_sleep_ns >= handoff_after_ns;
    };
    for (;;) {
      std::uint32_t w = 0;
      // A thread that has slept takes the lock with NEED_WAKE set: other sleepers may remain,
      // and the unlock cleared the only record of them. The price is at most one FUTEX_WAKE
      // that finds nobody (glibc's low-level lock does the same).
      const auto look = word.take_or_flag(w, sleeps > 0 ? Word::kNeedWake : 0, starved);
      if (look == Word::Look::took) return false;
      if (look == Word::Look::handoff_requested) {
        at(StackLockPoint::handoff_requested);
        wait_for_token(take_by_exchange, at);
        at(StackLockPoint::handoff_received);
        return true;
      }
      if (first_sleep_ns == 0) first_sleep_ns = Atoms::now_ns();
      std::int64_t timeout_ns = 0;  // none
      if (handoff_after_ns > 0 && (w & Word::kHandoffWanted) == 0) {
        // Sleep no longer than the rest of the bound, so the request goes in on time even if
        // no unlock wakes us first.
        timeout_ns = handoff_after_ns - (Atoms::now_ns() - first_sleep_ns);
        if (timeout_ns <= 0) timeout_ns = 1;
      }
      at(StackLockPoint::before_sleep);
      Atoms::futex_wait(word.atom(), w, timeout_ns);
      ++sleeps;
      at(StackLockPoint::woken);
    }
  }
  // [lock_sleeper.sleep]

  /// The unlocker, after release_step() said released with NEED_WAKE in the word: wake one
  /// sleeper, and hand it nothing: it re-reads the word and competes again.
  static void wake_one(Word& word) noexcept { Atoms::futex_wake_one(word.atom()); }

  /// The unlocker, after release_step() said handoff_withdrawn (LOCKED kept): publish the
  /// token and wake the requester, which owns the lock from then on.
  void hand_over() noexcept {
    // release: pairs with wait_for_token()'s acquire exchange (or load): our critical
    // section and the deferred work run before it happen-before the new owner's.
    handoff_.store(1, std::memory_order_release);
    Atoms::futex_wake_one(handoff_);
  }

 private:
  template <class At>
  void wait_for_token(bool take_by_exchange, At& at) noexcept {
    for (;;) {
      // The token is taken by an exchange, not a load and a store: two threads can be here for
      // one token. Once an unlock has withdrawn requester A's HANDOFF_WANTED and published the
      // token, B (a second sleeper past the bound) may set HANDOFF_WANTED again and arrive
      // here before A wakes; with a load and a store both could read 1 and both own the lock
      // (the exclusion stress caught exactly that under TSan's timing). With the exchange one
      // of them takes it and the other waits on; B's request is still in the word, so the next
      // unlock hands the lock to the one left. At most one token is ever outstanding: only an
      // owner publishes one, and until it is taken the lock has no owner to publish another.
      // acquire: pairs with the release store of 1 in hand_over(): the previous holder's
      // critical section and the deferred work it ran happen-before ours.
      at(StackLockPoint::handoff_wait);
      if (take_by_exchange) {
        const std::uint32_t token = handoff_.exchange(0, std::memory_order_acquire);
        at(StackLockPoint::handoff_token_read);
        if (token == 1) return;
      } else {
        // The broken take, kept for the test that shows why it is broken (negative control).
        // acquire: as above; relaxed store: the bug is the gap between the two, not an order.
        const std::uint32_t token = handoff_.load(std::memory_order_acquire);
        at(StackLockPoint::handoff_token_read);
        if (token == 1) {
          handoff_.store(0, std::memory_order_relaxed);
          return;
        }
      }
      at(StackLockPoint::handoff_sleep);
      Atoms::futex_wait(handoff_, 0, 0);
    }
  }

  // The hand-off token, on its own line (see the file's comment).
  alignas(64) typename Atoms::template atomic<std::uint32_t> handoff_{0};
};

}  // namespace handoff::stack
