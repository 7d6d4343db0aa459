// stack/stack_lock: a model of a user-level network stack's lock, after Onload's (chapter 05).
// Role: the one lock every send on a stack must hold, with the three behaviours seed 004
// traced a second-long stall to: a compare-and-swap fast path, a buzz (a try-lock spin) for a
// configurable time and then a futex sleep flagged by a need-wake bit, and an unlock that
// wakes one sleeper and hands it nothing (the woken thread competes again, and a thread that
// is still spinning on its core wins). A thread that finds the lock held can instead leave
// its work in the lock word for the holder, who runs it before it unlocks ("deferred work").
//
// What is modelled, after Onload's public source (https://github.com/Xilinx-CNS/onload:
// ef_eplock / ci_netif_lock, the kernel's oo_eplock_lock, read to learn, not copied; the
// facts are F5 on the book's sources page, book/sources.md):
//  - One 32-bit lock word holds the LOCKED bit, the NEED_WAKE bit and the deferred-work
//    list (its head and its length), so that "release the lock" and "the list is empty" are
//    one atomic fact: an unlock that would strand a pushed item fails its CAS and runs it.
//  - lock(): one CAS when free; else buzz (try-lock spin) for buzz_ns (-1: for ever, as
//    EF_BUZZ_USEC=-1; 0: not at all); then set NEED_WAKE and FUTEX_WAIT on the word.
//  - unlock(): run the deferred list until a CAS finds it empty and releases in the same
//    step; if NEED_WAKE was set, FUTEX_WAKE one sleeper. Nothing is handed over: the woken
//    thread re-reads the word and sleeps again if someone took the lock meanwhile.
//  - lock_or_defer(work): take the lock and run `work` here, or push `work` into the lock
//    word for the holder; past kDeferLimit (32, Onload's default) items, block on the lock.
//
// Beyond the seed: a hand-off variant (handoff_after_ns > 0), the starvation mode of Go's
// sync.Mutex and the hand-off bit of Linux's mutex. A sleeper that has waited past the bound
// raises HANDOFF_WANTED in the word (one request at a time: the bit is set by CAS only when
// clear) and then sleeps on a second word, the hand-off token. The next unlock does not clear
// LOCKED: it clears HANDOFF_WANTED, publishes the token and wakes a requester, which takes
// the token with an exchange and returns from lock() owning the lock. A buzzing thread sees
// LOCKED the whole time and cannot barge in. Two requesters can wait for one token (a second
// may raise the bit again as soon as the unlock has cleared it); the exchange lets only one
// take it, and the other's request, still in the word, is served by the next unlock. Off
// (0), the lock is Onload's: no hand-off.
//
// Differences of representation. Onload links its deferred sockets through the sockets
// themselves and keeps the count in the stack's shared state; here the items live in slots
// of the lock and the count sits in the word beside the head (stack/deferred_list.h says
// why). Onload's newer word is 64 bits; this one is 32, the width FUTEX_WAIT takes.
//
// Not modelled: the kernel side's resource manager and its lock-stealing for a process that
// died holding the lock, the priority of the stack's own poll work, and Onload's other flag
// bits (CI_EPLOCK_NETIF_*: poll, prime, packet-waiter and the rest, each a kind of work the
// unlocker does).
//
// The files, one per step (issue 26): stack/stack_lock_word.h, the word and every CAS on it;
// stack/deferred_list.h, the slots of the deferred-work list, its push and its run;
// stack/lock_sleeper.h, the buzz, the futex sleep and the hand-off token; and this one, the
// lock that composes them (lock(), unlock(), lock_or_defer()), its options and counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "stack/deferred_list.h"
#include "stack/lock_sleeper.h"
#include "stack/stack_lock_word.h"

namespace handoff::stack {

/// A test's window into the lock's slow paths.
///
/// A test's window into the lock's slow paths (the DeterministicSchedule idea, reduced to
/// named points): at() runs on the thread that reached the point and may block it there.
/// Production code passes none, and each point costs one predictable branch on a slow path.
class StackLockHooks {
 public:
  virtual ~StackLockHooks() = default;
  virtual void at(StackLockPoint point) noexcept = 0;
};

/// How the stack lock buzzes, sleeps and hands off.
struct StackLockOptions {
  /// How long lock() spins with try-locks before it sleeps. -1: for ever (never sleeps);
  /// 0: sleeps at once. Onload derives min(EF_POLL_USEC, 100 us) by default (seed 004).
  std::int64_t buzz_ns = 100'000;
  /// 0: no hand-off (Onload's lock). > 0: a waiter that has slept longer than this asks for
  /// the lock to be handed to it, and the next unlock does so.
  std::int64_t handoff_after_ns = 0;
  /// Run by the holder under the lock each time its unlock() is about to release or hand
  /// off the lock, after any deferred work it ran (so what that work gave back is seen):
  /// the owner's last act as holder, whichever path unlocked (NetworkStack tops its packet
  /// pool up here). nullptr: nothing.
  void (*before_release)(void* context) noexcept = nullptr;
  void* before_release_context = nullptr;
};

/// The stack lock's test seams: what a test sets to stop a thread at a point or select the
/// broken take. Production code never sets it; the defaults are the correct lock.
struct StackLockSeams {
  /// Test hooks; nullptr in production.
  StackLockHooks* hooks = nullptr;
  /// true: a requester takes the hand-off token with one exchange. false: with a load and a
  /// store, the broken take two requesters can both win (kept only for the test that shows it).
  bool handoff_take_by_exchange = true;
};

/// Totals since construction, all threads (relaxed counters: a recent value, not a cut).
/// Names follow Onload's stackdump where it has one.
struct StackLockCounters {
  std::uint64_t locks = 0;              ///< lock() / lock_or_defer() calls that ended holding it
  std::uint64_t lock_contends = 0;      ///< takes whose first CAS found the lock held
  std::uint64_t lock_buzz_catches = 0;  ///< contended takes won while buzzing (no sleep)
  std::uint64_t lock_sleeps = 0;        ///< FUTEX_WAITs on the lock word (a sleep per wait)
  std::uint64_t lock_wakes = 0;         ///< FUTEX_WAKEs sent by unlock() (Onload: lock_wakes)
  std::uint64_t deferred_work = 0;      ///< items pushed for the holder (Onload: deferred_work)
  std::uint64_t deferred_run = 0;       ///< items a holder ran before unlocking
  std::uint64_t deferred_full = 0;      ///< deferrals refused at kDeferLimit (the caller blocked)
  std::uint64_t handoff_requests = 0;   ///< starving waiters that set HANDOFF_WANTED
  std::uint64_t lock_handoffs = 0;      ///< unlocks that handed the lock over instead of releasing
};

/// What one lock() did, for a caller that attributes it to its own thread's counters.
struct LockResult {
  bool contended = false;    ///< the fast path failed
  std::uint32_t sleeps = 0;  ///< FUTEX_WAITs this call made
  bool handed = false;       ///< the lock was handed to this thread
};

/// What one unlock() did.
struct UnlockResult {
  std::uint32_t deferred_run = 0;  ///< deferred items this unlock ran
  bool woke = false;               ///< it sent a FUTEX_WAKE to the lock word's sleepers
  bool handed_off = false;         ///< it handed the lock to a starving waiter
};

/// How lock_or_defer() disposed of the work.
enum class DeferOutcome {
  ran_here,       ///< the lock was free: the work ran on this thread, and the lock is released
  deferred,       ///< the lock was held: the holder will run the work before it unlocks
  ran_after_wait  ///< kDeferLimit items were queued: this thread took the lock (blocking) and ran it
};

/// The stack lock. Guarantee: mutual exclusion; every deferred item runs exactly once, on a
/// thread holding the lock, before that thread's unlock releases it (so before any later
/// holder's critical section); no wake is lost (a sleeper flags NEED_WAKE in the same word
/// the unlocker releases, and FUTEX_WAIT rechecks the word). NOT guaranteed without the
/// hand-off: that a sleeper ever gets the lock. A thread that keeps re-taking it while
/// spinning can starve a sleeper for as long as it likes (seed 004's stall; the starvation
/// test shows it). With handoff_after_ns a lone sleeper waits at most about that bound plus
/// one critical section past its first sleep; several starving sleepers are served one request
/// at a time, each request by the next unlock, and one that sleeps while another's request is
/// pending looks again only when a plain unlock wakes it (requests are not queued).
/// Cost: an uncontended lock and unlock are one CAS each. A contended take spins up to
/// buzz_ns, then a FUTEX_WAIT per wake; an unlock with sleepers pays one FUTEX_WAKE. A
/// deferral is two CASes (a slot, the word) and no syscall.
class StackLock {
 public:
  /// The most items the lock word's list holds (stack/deferred_list.h).
  static constexpr std::uint32_t kDeferLimit = DeferredList<>::kDeferLimit;

  explicit StackLock(StackLockOptions options = {}, StackLockSeams seams = {});
  StackLock(const StackLock&) = delete;
  StackLock& operator=(const StackLock&) = delete;

  /// One CAS: take the lock if it is free. Never blocks, never defers.
  bool try_lock() noexcept;
  /// Take the lock: CAS, buzz, then sleep (or wait for a hand-off). See the class comment.
  LockResult lock() noexcept;
  /// Run the deferred work, then release (or hand off) and wake one sleeper if flagged.
  UnlockResult unlock() noexcept;
  /// Run `work` under the lock: here, if the lock is free; else by the holder, deferred; or,
  /// when kDeferLimit items are already queued, here after blocking on the lock. When the
  /// work ran here, `unlocked` (if given) receives what the unlock that followed it did.
  DeferOutcome lock_or_defer(const DeferredWork& work, UnlockResult* unlocked = nullptr) noexcept;

  /// Snapshots, for tests and /stats.
  bool is_locked() const noexcept;
  std::uint32_t deferred_queued() const noexcept;
  std::uint32_t word() const noexcept { return word_.look(); }
  StackLockCounters counters() const noexcept;
  const StackLockOptions& options() const noexcept { return options_; }

  // The lock word's layout (stack/stack_lock_word.h; public for tests and the book's diagram).
  static constexpr std::uint32_t kLocked = LockWord<>::kLocked;
  static constexpr std::uint32_t kNeedWake = LockWord<>::kNeedWake;
  static constexpr std::uint32_t kHandoffWanted = LockWord<>::kHandoffWanted;
  static constexpr unsigned kHeadShift = LockWord<>::kHeadShift;
  static constexpr std::uint32_t kHeadMask = LockWord<>::kHeadMask;
  static constexpr unsigned kCountShift = LockWord<>::kCountShift;
  static constexpr std::uint32_t kCountMask = LockWord<>::kCountMask;

 private:
  LockResult lock_slow() noexcept;
  /// What the lock does at each point the sleeper reports: the counter that moves there,
  /// then the test's hook.
  void at(StackLockPoint p) noexcept;
  void hook(StackLockPoint p) noexcept {
    if (seams_.hooks != nullptr) seams_.hooks->at(p);
  }
  void count(std::atomic<std::uint64_t>& c) noexcept {
    // relaxed: a statistic; it orders nothing.
    c.fetch_add(1, std::memory_order_relaxed);
  }

  const StackLockOptions options_;
  const StackLockSeams seams_;
  // The lock word, on its own line: every taker, pusher and unlocker CASes it.
  alignas(64) LockWord<> word_;
  // The hand-off token (its own line) and the deferred list's slots (the slot bitmap on its
  // own line): by value, no pointer between the lock and its steps.
  LockSleeper<> sleeper_;
  DeferredList<> deferred_;
  // Counters, on their own lines away from the word.
  alignas(64) std::atomic<std::uint64_t> locks_{0};
  std::atomic<std::uint64_t> lock_contends_{0};
  std::atomic<std::uint64_t> lock_buzz_catches_{0};
  std::atomic<std::uint64_t> lock_sleeps_{0};
  std::atomic<std::uint64_t> lock_wakes_{0};
  std::atomic<std::uint64_t> deferred_work_{0};
  std::atomic<std::uint64_t> deferred_run_{0};
  std::atomic<std::uint64_t> deferred_full_{0};
  std::atomic<std::uint64_t> handoff_requests_{0};
  std::atomic<std::uint64_t> lock_handoffs_{0};
};

}  // namespace handoff::stack
