// pool/elastic_pool_park: the elastic pool's park against its wakes: the parked count, the
// park tickets and the stop flag, with every step that touches them (chapter 03).
// Role: the store-buffering protocol of ElasticPool (pool/elastic_pool.cpp) with no futex
// and no statistics in it, a template over the atomics seam (sync/atomics.h), so that the
// pool and the relaxed-memory model (code/relacy/elastic_pool_model.cpp) run the same code.
// The wake word each thread parks on is sync/wake_channel.h's WakeWord; the sleep and the
// futex wake are the caller's.
//
// The park is announce → fence → re-check → sleep, against submit's push → fence → read the
// parked count (and stop's flag → fence → read the words): the store-buffering shape, in
// which at least one side sees the other. The parked count is lowered by exactly one party
// per park: the waker, right after the CAS that moves the thread to WOKEN and before it
// looks again (every wake comes from the loop thread), or the parking thread itself when
// its re-check took a job or saw the stop flag and its cancel_park won the word from the
// waker. Both are relaxed decrements; a thread's own increment is sequenced before its
// own decrement, and the waker's CAS (acquire) read the announcement that follows it.
#pragma once

#include <atomic>
#include <cstdint>

#include "pool/wait_word.h"  // ParkOrder: the ring pool's two park steps are the same two
#include "sync/atomics.h"

namespace handoff::pool {

/// Whether a park fences between its announcement and its re-check. Only seq_cst is
/// correct, and the pool always passes it; none is the broken variant FOR THE MODEL ONLY
/// (code/relacy/elastic_pool_model.cpp refutes it). Without the fence the announcement can
/// still be on its way when the re-check reads the ring, while submit, after its own fence,
/// reads a word not yet PARKED and wakes nobody. On x86 the parked count's locked fetch_add
/// drains what came before it, but the word's release store comes after it, a plain `mov`
/// that the ring's load may pass: a window of one store, which no run-time test here aims
/// at. On ARMv8 both the count and the word may be late.
enum class ParkFence { seq_cst, none };

/// The elastic pool's parked count, park tickets and stop flag, and every step on them.
template <class Atoms = sync::StdAtomics>
class ElasticPark {
 public:
  /// How a park's two steps ended.
  enum class Outcome { took_job, stop, sleep };

  /// A pool thread's park on its word `me` (a WakeWord), against `jobs` (an MpmcRing):
  /// announce and re-check in `order`, running `between` between the two steps (a test
  /// hook; a no-op in production). took_job: `job` holds a job; stop: the stop flag is up
  /// and the ring empty; sleep: the thread is counted parked and must sleep on `me` with
  /// `seq` until a waker moves it to WOKEN (the waker lowered the count).
  // [elastic.park]
  template <class Word, class Ring, class Job, class Between>
  Outcome park(Word& me, Ring& jobs, Job& job, ParkOrder order, ParkFence fence, Between&& between,
               std::uint32_t& seq) noexcept {
    // relaxed: a ticket that ranks parks by age for the waker's choice; it orders nothing.
    seq = park_seq_.fetch_add(1, std::memory_order_relaxed);
    if (order == ParkOrder::recheck_then_announce) {
      // The broken order, kept as the negative control (see ParkOrder): a push between the
      // re-check and the announcement reads a lane not all parked and wakes nobody.
      // acquire: as below.
      if (jobs.try_pop(job)) return Outcome::took_job;
      if (stopping_.load(std::memory_order_acquire)) return Outcome::stop;
      between();
      parked_.fetch_add(1, std::memory_order_relaxed);
      me.announce_parked(seq);
      // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
      if (fence == ParkFence::seq_cst) Atoms::fence(std::memory_order_seq_cst);
      return Outcome::sleep;
    }
    // Counted before announced. relaxed: announce_parked()'s release orders it before the
    // waker's decrement (which follows an acquire CAS that read the announcement).
    parked_.fetch_add(1, std::memory_order_relaxed);
    me.announce_parked(seq);
    // The announcement (count and word) must be visible before we look at the ring again:
    // a store then a load. Pairs with the fence in all_parked_after_push() between a push
    // and the read of the count, and with the one in raise_stop() between raising its flag
    // and reading the words. The fence: mfence on x86-64 (GCC: lock or), dmb ish on AArch64.
    if (fence == ParkFence::seq_cst) Atoms::fence(std::memory_order_seq_cst);
    between();
    // acquire: pairs with raise_stop()'s release store: a thread that sees the flag sees
    // every job pushed before it, so the try_pop below finding nothing means nothing is left.
    const bool stop = stopping_.load(std::memory_order_acquire);
    const bool took = jobs.try_pop(job);
    if (took || stop) {
      // Not parking after all. If the waker woke us meanwhile, it owns the way out of
      // PARKED and lowered the count itself. relaxed: our own increment is sequenced before.
      if (me.cancel_park(seq)) parked_.fetch_sub(1, std::memory_order_relaxed);
      return took ? Outcome::took_job : Outcome::stop;
    }
    return Outcome::sleep;
  }
  // [elastic.park]

  // [elastic.submit]
  /// The loop, right after a push: whether every one of `threads` is counted parked (rule
  /// 2: only then does submit wake one). The push (a release store of the cell's sequence)
  /// must be visible before we read the parked count: a store then a load, which only a
  /// seq_cst fence orders. Pairs with the fence in park() between announcing and
  /// re-checking. relaxed load: the fence orders it after the push; only the loop thread
  /// lowers the count for a woken thread, so it reads its own decrements.
  bool all_parked_after_push(int threads) noexcept {
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    Atoms::fence(std::memory_order_seq_cst);
    return parked_.load(std::memory_order_relaxed) >= threads;
  }
  // [elastic.submit]

  // [elastic.wake]
  /// The loop: wake the thread that parked last among `count` words, lowering the count
  /// for it exactly once. `wake(word, seq)` claims the word (WakeWord::claim_wake) and, in
  /// the pool, wakes its futex; false when the thread got out first (it cancelled its
  /// park). Then choose again. False when nobody is parked.
  template <class Word, class Wake>
  bool wake_newest(Word* words, int count, Wake&& wake) noexcept {
    for (;;) {
      std::uint32_t seq = 0;
      const int best = Word::newest_parked(words, count, seq);
      if (best < 0) return false;
      if (wake(words[best], seq)) {
        // The CAS made us the owner of the thread's way out of PARKED: lower its count now,
        // before this thread looks at the count again. relaxed: the CAS's acquire already
        // ordered the thread's increment before this decrement.
        parked_.fetch_sub(1, std::memory_order_relaxed);
        return true;
      }
      // The thread's re-check found work and it cancelled its park: choose again.
    }
  }
  // [elastic.wake]

  /// stop(): raise the flag, then the caller wakes every parked thread (wake_newest until
  /// false). release: pairs with the acquire in park(): every job pushed so far is in the
  /// ring for a thread that sees the flag. The flag must be visible before the waker reads
  /// the threads' words: a store then a load; the fence pairs with the one in park()
  /// between announcing and re-checking.
  void raise_stop() noexcept {
    stopping_.store(true, std::memory_order_release);
    // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
    Atoms::fence(std::memory_order_seq_cst);
  }

  /// A spinning thread's look at the stop flag. relaxed: the park that follows re-reads it
  /// with acquire before it trusts an empty ring.
  bool stop_raised_hint() const noexcept { return stopping_.load(std::memory_order_relaxed); }

  /// Threads counted parked. relaxed: a snapshot for the loop's wait cap (read after this
  /// pass's fenced pushes), tests and the harness; ordered by nothing.
  int parked() const noexcept { return parked_.load(std::memory_order_relaxed); }

 private:
  // Threads counted parked: raised by a thread as it parks, lowered by whoever moves it off
  // PARKED (the waker, or the thread's own cancel). Read by submit at every push.
  alignas(64) typename Atoms::template atomic<int> parked_{0};
  typename Atoms::template atomic<std::uint32_t> park_seq_{0};         // tickets that rank parks by age
  alignas(64) typename Atoms::template atomic<bool> stopping_{false};  // raised once every job is in the ring
};

}  // namespace handoff::pool
