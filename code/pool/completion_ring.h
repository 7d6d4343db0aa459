// pool/completion_ring: the pool→loop half of a ring hand-off: frames through an MpmcRing,
// and a poke only for a loop that said it is about to wait (chapter 03).
// Changed in chapter 04: the loop's flag and poke moved to reactor/wake_flag.
// Role: the completion side every ring pool shares: pool threads push frames and poke the
// loop's datagram socket only when its flag is raised; the loop raises the flag, re-checks,
// waits in epoll on the socket, and drains. Chapter 02's protocol, taken out of its RingPool
// in chapter 03 so that RingPool and ElasticPool share one copy; its flag and poke are
// reactor/wake_flag since chapter 04, which the callback loop wakes through as well.
#pragma once

#include <cstddef>

#include "pool/job.h"
#include "reactor/wake_flag.h"
#include "stats/thread_stats.h"
#include "sync/mpmc_ring.h"

namespace handoff::pool {

/// A completion ring's test seam, its fences. Production code never sets it; the default
/// is the correct protocol.
struct CompletionRingSeams {
  /// FOR TESTS ONLY. false drops BOTH seq_cst fences (push → read the flag, and raise the
  /// flag → re-check): the broken variant, kept so that the loop-wake stress
  /// (benchmarks/probes/loop_wake_stress.cpp, --fences off) runs the real ring without
  /// them. The flag's store and load stay plain (relaxed) on either setting, so on x86
  /// both sides are a `mov` store then a `mov` load, which the store buffer may reorder.
  bool fences = true;
};

/// Frames from pool threads to the loop. Two store→load sequences meet here (the
/// store-buffering shape; each needs a seq_cst fence, both in reactor::WakeFlag):
///   loop:      announce_wait(): raise the flag → fence → (caller) re-check has_frames()
///   pool:      push(): push the frame → fence → read the flag → poke if it was raised
/// At least one side sees the other's store, so a frame never waits while the loop sleeps
/// with no poke coming. A pool thread that makes room in the loop's JOB ring without a frame
/// (a job dropped unrun) calls poke_loop_if_waiting() after its pop, so a loop that waits for
/// that room is woken too (the caller's re-check then looks at the job ring's room as well).
///
/// Cost: a frame is one push (no syscall) while the loop is busy; a waiting loop costs one
/// send and one recv per wait, whichever thread completes first (exchange: one poke per
/// raised flag).
class CompletionRing {
 public:
  explicit CompletionRing(std::size_t capacity, CompletionRingSeams seams = {});
  ~CompletionRing();  // no thread uses it any more: frees the frames it still holds

  CompletionRing(const CompletionRing&) = delete;
  CompletionRing& operator=(const CompletionRing&) = delete;

  // ---- a pool thread's side
  /// Push a frame (owned by the ring from now on) and poke the loop if it waits.
  void push(Frame* frame, stats::ThreadStats& stats);
  /// After a pop from the job ring that produced no frame: poke the loop if it waits.
  void poke_loop_if_waiting(stats::ThreadStats& stats);

  // ---- the loop's side
  /// The descriptor the loop's reactor watches (readable: a poke).
  int loop_fd() const noexcept { return wake_.loop_fd(); }
  /// Raise the flag and fence; the caller then re-checks has_frames() (and anything else a
  /// pool thread's poke covers) before it waits.
  void announce_wait() noexcept;
  /// Lower the flag: the loop will not wait after all, or it has woken.
  void end_wait() noexcept;
  /// Whether a frame is ready (a snapshot; after announce_wait() it is the re-check).
  bool has_frames() const noexcept { return !frames_.empty(); }
  /// Pop every frame ready and hand each to `sink`, then free it. Returns how many of them
  /// ended a job (whole, end or abort): the answers completed.
  std::size_t drain(FrameSink& sink);
  /// Read one poke off the loop's socket (readiness said there is one).
  void take_poke(stats::ThreadStats& loop_stats);
  /// Whether the loop's flag is raised (for tests: a snapshot, ordered by nothing).
  bool loop_waiting() const noexcept;

 private:
  sync::MpmcRing<Frame*> frames_;
  reactor::WakeFlag wake_;  // the loop's flag and its poke socket: pool threads → loop
};

}  // namespace handoff::pool
