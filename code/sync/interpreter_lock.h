// sync/interpreter_lock: a model of CPython's global interpreter lock (chapter 04).
// Role: the lock a Python thread must hold to run interpreted work, handed between threads
// as CPython 3.x hands its GIL (a switch interval, a drop request, forced switching), so
// that a probe can show what a loop thread pays when the threads that wake it still hold
// the lock it needs (seed 003's wake spin).
//
// What is modelled, after CPython's Python/ceval_gil.c (3.2 to 3.12; read, not copied):
//  - The lock is a flag guarded by a mutex, with a condition variable its waiters sleep on.
//    A free lock is taken at once by whoever asks (no queue, no fairness: a thread that
//    arrives as it is released may take it before a waiter that was signalled).
//  - A waiter sleeps up to the switch interval (5 ms by default, sys.getswitchinterval());
//    if the wait timed out, the lock is still held and no other thread took it meanwhile
//    (the switch number did not move), it sets the drop request and waits again.
//  - The holder polls the drop request at its eval-breaker points, checkpoint() here (CPython
//    checks it between bytecodes: at calls and backward jumps); when set it drops the lock
//    and takes it again. With forced switching (CPython's FORCE_SWITCHING, on in every
//    build) a thread that drops while a request is pending does not return until another
//    thread has taken the lock, so it cannot be the first to take it back.
//  - release_for_io() runs a blocking call with the lock released, as CPython's
//    Py_BEGIN_ALLOW_THREADS / Py_END_ALLOW_THREADS do around a blocking system call (the
//    release is an ordinary drop, forced switching included; the re-take an ordinary take).
//  - Counters: acquisitions, the acquisitions that had to wait, drop requests set, forced
//    switches, switches (takes by a thread other than the last holder), total and longest
//    wait.
//
// What is not: bytecode (interpreted work is whatever the caller does between
// checkpoints), signals, pending calls and asynchronous exceptions (the other eval-breaker
// reasons), sub-interpreters, finalisation, 3.13's free-threaded build and its per-thread
// eval-breaker bits (here, as in 3.11 and 3.12, one drop request for the whole lock: any
// holder honours it and any taker clears it). Two deliberate differences of mechanism: one
// mutex guards both the lock and the switch handshake (CPython has gil->mutex and
// switch_mutex; the states a thread can observe are the same), and the forced-switch wait
// loops until the switch happened (CPython waits once on switch_cond and may return on a
// spurious wakeup). Holding is per thread: the thread that releases must be the one that
// acquired.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace handoff::sync {

/// The interpreter lock's switch interval and forced switching, as CPython's.
struct InterpreterLockOptions {
  /// How long a waiter sleeps before it asks the holder to drop (CPython: 5 ms).
  std::chrono::nanoseconds switch_interval = std::chrono::milliseconds(5);
  /// A thread that drops on request waits until another has taken the lock (CPython's
  /// FORCE_SWITCHING). false: it may take the lock straight back, the behaviour
  /// FORCE_SWITCHING was added to stop (kept selectable for the test that shows it).
  bool forced_switching = true;
  /// false: every call returns at once and nothing is excluded: the "no interpreter
  /// lock" arm of a measurement.
  bool enabled = true;
};

/// What an interpreter lock did since it was made.
struct InterpreterLockCounters {
  std::uint64_t acquisitions = 0;     ///< takes, including re-takes after a drop
  std::uint64_t waits = 0;            ///< takes that found the lock held and slept
  std::uint64_t drop_requests = 0;    ///< times a waiter's interval ran out and it set the request
  std::uint64_t forced_switches = 0;  ///< drops that waited for another thread to take the lock
  std::uint64_t switches = 0;         ///< takes by a thread other than the last holder
  std::int64_t wait_ns_total = 0;     ///< time spent in takes that waited, all threads
  std::int64_t wait_ns_max = 0;       ///< the longest such take
};

/// One interpreter lock. Guarantee: at most one thread holds it; a waiter is never kept out
/// longer than about one switch interval past the moment it asked by a holder that keeps
/// reaching checkpoint() (a holder that never does keeps it as long as it likes: CPython's
/// behaviour too). Cost: an uncontended take or drop is one mutex round; a checkpoint with
/// no request pending is one relaxed load; a contended take sleeps on a condition variable
/// (a futex wait and a wake), and a forced switch sleeps the dropper as well.
class InterpreterLock {
 public:
  explicit InterpreterLock(InterpreterLockOptions options = {});

  InterpreterLock(const InterpreterLock&) = delete;
  InterpreterLock& operator=(const InterpreterLock&) = delete;

  /// Take the lock (CPython's take_gil). Returns the nanoseconds it waited (0: it was free).
  std::int64_t acquire();
  /// Drop the lock (drop_gil); the caller must hold it. With a drop request pending and
  /// forced switching on, returns only once another thread has taken it.
  void release();
  /// An eval-breaker point: if a drop has been requested, drop the lock and take it again.
  /// Returns the nanoseconds the re-take waited, or nothing when no drop was requested.
  std::optional<std::int64_t> checkpoint();
  /// Run `blocking` (a blocking call: I/O, a wait) with the lock released, and take it back
  /// after, as CPython does around a blocking system call. The caller must hold the lock.
  template <class Blocking>
  decltype(auto) release_for_io(Blocking&& blocking) {
    release();
    /// Takes the lock back however the blocking call ends.
    struct Retake {
      InterpreterLock& lock;
      ~Retake() { lock.acquire(); }
    } retake{*this};
    return std::forward<Blocking>(blocking)();
  }

  /// Whether a drop request is pending (a snapshot, for tests and probes).
  bool drop_requested() const noexcept;
  /// Whether the calling thread holds the lock (always false when disabled).
  bool held_by_me() const;
  InterpreterLockCounters counters() const;
  const InterpreterLockOptions& options() const noexcept { return options_; }

 private:
  const InterpreterLockOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cond_;         // waiters for the lock (CPython's gil->cond)
  std::condition_variable switch_cond_;  // a forced-switch dropper (gil->switch_cond)
  bool locked_ = false;                  // guarded by mu_
  std::thread::id holder_;               // guarded by mu_: who holds it now
  std::thread::id last_holder_;          // guarded by mu_: who took it last (kept after a drop)
  std::uint64_t switch_number_ = 0;      // guarded by mu_: takes by a new thread
  InterpreterLockCounters counters_;     // guarded by mu_
  // Set and cleared under mu_; read without it by the holder at every checkpoint (CPython's
  // eval_breaker), on its own line so those reads do not share one with the mutex.
  alignas(64) std::atomic<bool> drop_request_{false};
};

}  // namespace handoff::sync
