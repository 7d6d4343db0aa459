// exercises/05-starved-waiter: chapter 05's stack lock cut down to its sleep and its unlock;
// the unlock's hand-off, to write.
#pragma once

#include <atomic>
#include <cstdint>

// The seam. The tests build the lock on the standard atomics (sync/atomics.h), the kernel's
// futex (futex.h) and the monotonic clock; the grader's model (model/tiny_lock_model.cpp)
// builds tiny_lock.cpp and your unlock.cpp once more on Relacy's atomics, a modelled futex
// and a model's clock: it defines EXERCISE_MODEL_SEAM and its own exercise::Atoms,
// exercise::Futex and exercise::Clock before it includes this header. Write atomics as the
// given code does (word_.compare_exchange_weak(...)) and fences as
// std::atomic_thread_fence(...): the model sees both.
#ifndef EXERCISE_MODEL_SEAM
#include "futex.h"
#include "stats/thread_cpu.h"
#include "sync/atomics.h"
namespace exercise {
using Atoms = handoff::sync::StdAtomics;
/// The time a waiter's bound is measured in.
struct Clock {
  static std::int64_t now_ns() noexcept { return handoff::stats::monotonic_ns(); }
};
}  // namespace exercise
#endif

namespace exercise {

/// The points a test may hold a thread at. Production passes no hooks.
enum class TinyLockPoint {
  before_sleep,       ///< a waiter flagged NEED_WAKE and is about to FUTEX_WAIT on the word
  handoff_requested,  ///< a waiter past the bound set HANDOFF_WANTED and is about to FUTEX_WAIT
  woken,              ///< a waiter's FUTEX_WAIT returned; it has not re-read the word yet
};

class TinyLockHooks {
 public:
  virtual ~TinyLockHooks() = default;
  virtual void at(TinyLockPoint point) noexcept = 0;
};

/// What one lock() did.
struct TinyLockResult {
  std::uint32_t sleeps = 0;  ///< FUTEX_WAITs this call made
  bool handed = false;       ///< the lock was handed to this thread
};

/// What one unlock() did.
struct TinyUnlockResult {
  bool woke = false;        ///< it released the lock and woke one sleeper (NEED_WAKE was set)
  bool handed_off = false;  ///< it handed the lock to the waiter that asked for it
};

/// A lock word after Onload's: a CAS to take it, a futex sleep flagged by NEED_WAKE, and an
/// unlock that releases and wakes one sleeper, handing it nothing (code/stack/stack_lock.h,
/// without the buzz and the deferred work). The woken thread competes again, and a thread
/// that spins with try_lock() on its core wins every time: seed 004's starved worker.
///
/// The hand-off (handoff_after_ns > 0): a waiter that has slept for longer than the bound
/// sets HANDOFF_WANTED in the word (one request at a time: set by CAS only when clear) and
/// sleeps again, now as a requester. unlock() must then hand the lock over instead of
/// releasing it (see unlock()). A requester that wakes and finds HANDED takes it with a CAS
/// that clears HANDED and returns owning the lock (it never sets LOCKED: LOCKED must still
/// be set). One that finds neither HANDED nor HANDOFF_WANTED knows its request was dropped
/// without a hand-off and competes again, as any waiter does.
class TinyLock {
 public:
  // The word's bits (public for tests).
  static constexpr std::uint32_t kLocked = 1U << 0;         ///< someone holds the lock
  static constexpr std::uint32_t kNeedWake = 1U << 1;       ///< a waiter may sleep on the word
  static constexpr std::uint32_t kHandoffWanted = 1U << 2;  ///< a waiter past the bound asks for it
  static constexpr std::uint32_t kHanded = 1U << 3;         ///< handed over, not yet taken by a requester

  /// handoff_after_ns: 0, no hand-off (Onload's lock); > 0, the bound.
  explicit TinyLock(std::int64_t handoff_after_ns = 0, TinyLockHooks* hooks = nullptr)
      : handoff_after_ns_(handoff_after_ns), hooks_(hooks) {}
  TinyLock(const TinyLock&) = delete;
  TinyLock& operator=(const TinyLock&) = delete;

  // ---- given (tiny_lock.cpp)

  /// One CAS: take the lock if LOCKED is clear. Never blocks (the tests' spinning thread).
  bool try_lock() noexcept;
  /// Take the lock: a CAS, else sleep (and, past the bound, ask for the hand-off).
  TinyLockResult lock() noexcept;

  std::uint32_t word() const noexcept { return word_.load(std::memory_order_relaxed); }
  std::uint64_t handoff_requests() const noexcept { return handoff_requests_.load(std::memory_order_relaxed); }
  std::uint64_t handoffs() const noexcept { return handoffs_.load(std::memory_order_relaxed); }

  // ---- the exercise (unlock.cpp)

  /// Release the lock and wake one sleeper if NEED_WAKE is set; or, if a waiter has asked
  /// (HANDOFF_WANTED), hand the lock to it: in one CAS keep LOCKED (and NEED_WAKE), withdraw
  /// the request and set HANDED, then wake the sleepers with wake_all() (the requester sleeps
  /// on the word among them) and count it in handoffs_.
  TinyUnlockResult unlock() noexcept;

 private:
  friend struct TinyLockModel;  // the grader's model takes the lock as try_lock() does, and looks at what it read

  /// try_lock(), and the word its CAS replaced (`was`) when it took the lock.
  bool try_lock(std::uint32_t& was) noexcept;
  TinyLockResult lock_slow() noexcept;
  void hook(TinyLockPoint p) noexcept {
    if (hooks_ != nullptr) hooks_->at(p);
  }
  // Given: FUTEX_WAKE on the word, for one sleeper or for all of them.
  void wake_one() noexcept;
  void wake_all() noexcept;

  const std::int64_t handoff_after_ns_;
  TinyLockHooks* const hooks_;
  Atoms::atomic<std::uint32_t> word_{0};
  Atoms::atomic<std::uint64_t> handoff_requests_{0};
  Atoms::atomic<std::uint64_t> handoffs_{0};
  Futex futex_;
};

}  // namespace exercise
