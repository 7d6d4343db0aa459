// sync/wake_channel: one pool thread's own wake: a 32-bit state word and a futex on it
// (chapter 03).
// Role: let a waker wake exactly the thread it chose, and leave no wake behind for anyone
// else to read: the state word says what the thread is doing, a compare-exchange off PARKED
// decides who owns the wake, and the futex is only the sleep and the nudge out of it.
//
// Why a futex. Chapter 01's price list (benchmarks/results/01-baseline/handoff-probe.csv,
// rendered in chapter 03's note) prices a round trip through each primitive. It has no row
// for a bare futex that always sleeps: atomic_wait_notify is a futex, but libstdc++ spins
// before it sleeps, so part of its round trips never reach the kernel (its sleeps column
// says how many do); condvar_mutex is a futex wait and wake with a mutex around them, and
// prices a bare futex from above. On the 2-core VM the sleeping mechanisms' min-max ranges
// overlap, in total CPU and on the waker's side alike, so the price does not choose between
// a futex, an eventfd and a datagram pair; at most it leans against the datagram pair.
// What else each one brings does. A datagram or an eventfd is a buffer: a wake written to it
// stays there until somebody reads it, and the wake chapter 02's pool can lose is a buffered
// wake read by the wrong thread. A futex stores nothing: the state word is the message, FUTEX_WAIT sleeps only
// while the word still says PARKED, and a FUTEX_WAKE that finds nobody asleep vanishes. It
// needs no descriptor per thread and no epoll (nobody waits on a pool thread's channel but
// the thread). We call the futex ourselves rather than through std::atomic::wait so that its
// spin is not added to ours (the lane's idle spinner, sync/spin_wait.h) and every system
// call is counted.
#pragma once

#include <atomic>
#include <cstdint>

#include "stats/thread_stats.h"
#include "sync/atomics.h"

namespace handoff::sync {

/// One thread's wake word, the atomic half of its wake channel: a template over the atomics
/// seam (sync/atomics.h), so that WakeChannel (which adds the futex) and the elastic pool's
/// relaxed-memory model (code/relacy/elastic_pool_model.cpp) run the same code. The word
/// holds a kind in its low two bits and, for PARKED, a park sequence number in the other
/// thirty:
///
///   RUNNING  the thread is running a job or looking at the ring (only it writes this)
///   SPINNING the thread is the lane's idle spinner (only it writes this)
///   PARKED(seq) the thread has announced it is about to sleep, or sleeps
///   WOKEN    a waker moved it off PARKED; the thread will run again (only it leaves WOKEN)
///
/// Guarantee: a thread leaves PARKED exactly once per park, by ONE compare-exchange: the
/// waker's (PARKED → WOKEN, claim_wake()) or the thread's own (PARKED → RUNNING,
/// cancel_park(), when its re-check found work). Whoever wins owns the transition; the loser
/// sees the CAS fail and does nothing. So no wake is ever left for a thread that is not
/// asleep, and a thread that sleeps returns only once a waker chose it.
template <class Atoms = sync::StdAtomics>
class WakeWord {
 public:
  /// What the thread is doing (the word's low two bits).
  enum class Kind : std::uint32_t { running = 0, spinning = 1, parked = 2, woken = 3 };

  /// The thread: it is running, or it spins as the lane's idle spinner. Only called while the
  /// word is RUNNING, SPINNING or WOKEN, which nobody else writes. relaxed: a report for
  /// tests and the harness; nothing is ordered by it (the wake protocol uses PARKED only).
  void set(Kind kind) noexcept { word_.store(static_cast<std::uint32_t>(kind), std::memory_order_relaxed); }

  /// The thread: announce PARKED with sequence `seq` (only its low 30 bits are kept).
  /// release: pairs with the acquire of claim_wake()'s CAS: what the thread did before
  /// announcing (it counted itself in the lane's parked count) happens before the waker's
  /// next step (it lowers that count), so the count never goes below the threads it counts.
  /// The caller must follow this with a seq_cst fence before it re-checks the ring (see
  /// pool/elastic_pool_park.h).
  void announce_parked(std::uint32_t seq) noexcept { word_.store(parked_word(seq), std::memory_order_release); }

  /// The thread: its re-check found work (or a stop), so it leaves PARKED by itself. False
  /// when a waker moved it to WOKEN first: the waker then owns the transition (and lowered
  /// the parked count); the thread just carries on, as it would after a wake. Either way
  /// the word is RUNNING afterwards. relaxed: the CAS decides who owns the transition by
  /// its atomicity alone; the thread reads nothing the waker wrote through it.
  bool cancel_park(std::uint32_t seq) noexcept {
    std::uint32_t expected = parked_word(seq);
    if (word_.compare_exchange_strong(expected, static_cast<std::uint32_t>(Kind::running), std::memory_order_relaxed,
                                      std::memory_order_relaxed)) {
      return true;
    }
    set(Kind::running);  // it was WOKEN: only this thread leaves WOKEN
    return false;
  }

  /// The thread, before each sleep: whether the word still says PARKED(seq). acquire: pairs
  /// with the release half of claim_wake()'s CAS: what the waker did before it chose this
  /// thread (pushed a job, raised the stop flag) is visible once we see WOKEN.
  bool still_parked(std::uint32_t seq) const noexcept {
    return word_.load(std::memory_order_acquire) == parked_word(seq);
  }

  /// The waker: the sequence this word is parked with, or false (a snapshot). relaxed:
  /// only a choice among candidates; claim_wake()'s CAS checks it again.
  bool parked_seq(std::uint32_t& seq) const noexcept {
    const std::uint32_t w = word_.load(std::memory_order_relaxed);
    if ((w & 3U) != static_cast<std::uint32_t>(Kind::parked)) return false;
    seq = w >> 2;
    return true;
  }

  /// The waker: move the thread from PARKED(seq) to WOKEN. False when the word no longer
  /// says PARKED(seq): the thread cancelled its park or was woken by someone else. acq_rel.
  /// acquire: pairs with announce_parked()'s release (the thread's parked count went up
  /// before we lower it). release: pairs with still_parked()'s acquire load (see there).
  /// Failure (relaxed): we touch nothing.
  bool claim_wake(std::uint32_t seq) noexcept {
    std::uint32_t expected = parked_word(seq);
    return word_.compare_exchange_strong(expected, static_cast<std::uint32_t>(Kind::woken), std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
  }

  /// The waker's choice among `count` words: the index of the one parked last (the newest
  /// park sequence, see newer()) and its sequence in `seq`, or -1 when none is parked. A
  /// snapshot: claim_wake() checks the sequence again.
  template <class Word>
  static int newest_parked(const Word* words, int count, std::uint32_t& seq) noexcept {
    int best = -1;
    for (int i = 0; i < count; ++i) {
      std::uint32_t s = 0;
      if (words[i].parked_seq(s) && (best < 0 || newer(s, seq))) {
        best = i;
        seq = s;
      }
    }
    return best;
  }

  /// The kind, for tests and the harness (a snapshot, ordered by nothing).
  Kind kind() const noexcept {
    // relaxed: a snapshot for tests.
    return static_cast<Kind>(word_.load(std::memory_order_relaxed) & 3U);
  }

  /// Sequences are kept to 30 bits and compared modulo 2^30 (see newer()).
  static constexpr std::uint32_t kSeqMask = (std::uint32_t{1} << 30) - 1;
  /// Whether park sequence `a` was taken after `b`: the waker prefers the newest (the
  /// thread that parked last has the warmest caches). Modulo 2^30, so a thread parked for
  /// 2^29 of its siblings' parks would look new again: a preference only, never a wake lost.
  static bool newer(std::uint32_t a, std::uint32_t b) noexcept {
    const std::uint32_t ahead = (a - b) & kSeqMask;
    return ahead != 0 && ahead < (kSeqMask >> 1) + 1;
  }

 protected:
  static constexpr std::uint32_t parked_word(std::uint32_t seq) noexcept {
    return ((seq & kSeqMask) << 2) | static_cast<std::uint32_t>(Kind::parked);
  }
  // Its own cache line: the thread writes it at every idle episode, the waker reads it.
  alignas(64) typename Atoms::template atomic<std::uint32_t> word_{static_cast<std::uint32_t>(Kind::running)};
};

/// One thread's wake channel: its wake word and a futex on it.
///
/// Cost: the thread's side is plain stores and one CAS per park; a sleep is one FUTEX_WAIT
/// (more only after a spurious return); a wake is one CAS and one FUTEX_WAKE.
class WakeChannel : public WakeWord<> {
 public:
  /// The thread: sleep while the word is still PARKED(seq), then set it RUNNING. Counts
  /// every FUTEX_WAIT in `stats` (handoff_recvs and syscalls).
  void sleep(std::uint32_t seq, stats::ThreadStats& stats) noexcept;

  /// The waker: move the thread from PARKED(seq) to WOKEN (claim_wake()) and wake it. False
  /// (and no syscall) when the claim fails. Counts the FUTEX_WAKE in `stats`
  /// (handoff_sends and syscalls).
  bool wake(std::uint32_t seq, stats::ThreadStats& stats) noexcept;

 private:
  static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "the futex is the word itself");
};

}  // namespace handoff::sync
