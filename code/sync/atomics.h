// sync/atomics: the seam between a wake protocol and the atomics it runs on (chapter 03).
// Role: let the protocol code the product compiles run, unchanged, under a relaxed-memory
// checker. A protocol is a template over an `Atoms` policy; the product's policy is
// StdAtomics (std::atomic and std::atomic_thread_fence, nothing else, so it costs nothing),
// and the models in code/relacy/ instantiate the same template with Relacy's atomics, which
// explore the C++ memory model's weak orderings (what an ARMv8 core may do and x86 never
// shows). folly's DeterministicSchedule does the same with its `Atom` template parameter.
//
// An Atoms policy provides:
//   template <class T> using atomic = ...;   load/store/exchange/fetch_add/fetch_sub/fetch_and/
//                                            compare_exchange_weak/strong, with std orders
//   static void fence(std::memory_order);    a thread fence
//   using mutex = ...;                       lock() and unlock() (std::lock_guard takes it),
//                                            for a protocol whose edge is a lock
//   static void futex_wait(atomic<std::uint32_t>&, std::uint32_t expected, std::int64_t timeout_ns);
//   static void futex_wake_one(atomic<std::uint32_t>&);
//                                            the futex calls (sync/futex.h), for a protocol
//                                            that sleeps on one of its own words (since
//                                            issue 39: the stack lock's sleeper)
//   template <class T> using plain = ...;     a plain (non-atomic) variable of the protocol's,
//                                            assigned and read as a T, for data the atomics
//                                            publish (the deferred list's slots): the product's
//                                            is T itself, a model's one the checker follows
//   static std::int64_t now_ns();             the monotonic clock, for a protocol that decides
//                                            by elapsed time (the stack lock's buzz and its
//                                            starvation bound); a model's policy stands in a
//                                            clock the model moves
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "stats/thread_cpu.h"
#include "sync/futex.h"

namespace handoff::sync {

/// The product's atomics: the standard ones.
struct StdAtomics {
  template <class T>
  using atomic = std::atomic<T>;
  /// seq_cst: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64; acquire:
  /// no instruction on x86-64, dmb ishld on AArch64; release: none on x86-64, dmb ish.
  static void fence(std::memory_order order) noexcept { std::atomic_thread_fence(order); }
  using mutex = std::mutex;
  /// Plain data is plain: a model's policy stands in a variable whose accesses it checks.
  template <class T>
  using plain = T;
  /// The futex calls themselves (sync/futex.h): a model's policy stands a modelled futex in.
  static void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) noexcept {
    sync::futex_wait(word, expected, timeout_ns);
  }
  static void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept { sync::futex_wake_one(word); }
  /// The monotonic clock (CLOCK_MONOTONIC, stats/thread_cpu.h): a model's policy stands its
  /// own clock in, so the search decides when a bound on elapsed time is reached.
  static std::int64_t now_ns() noexcept { return stats::monotonic_ns(); }
};

}  // namespace handoff::sync
