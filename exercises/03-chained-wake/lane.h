// exercises/03-chained-wake: two takers on one lane with ONE shared wake socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "sync/mpmc_ring.h"

// The seam. The tests build the lane on the standard atomics (sync/atomics.h) and an eventfd
// (wake.h); the grader's model (model/lane_model.cpp) builds lane.cpp and your
// pass_wake_on.cpp once more on Relacy's atomics and a counted semaphore: it defines
// EXERCISE_MODEL_SEAM and its own exercise::Atoms and exercise::Wake before it includes this
// header. Write a fence as std::atomic_thread_fence(...): the model sees it.
#ifndef EXERCISE_MODEL_SEAM
#include "sync/atomics.h"
#include "wake.h"
namespace exercise {
using Atoms = handoff::sync::StdAtomics;
using Wake = SemaphoreWake;
}  // namespace exercise
#endif

namespace exercise {

/// Jobs are ints in a ring. Takers that find the ring empty park on one wake that all of
/// them share (an eventfd in semaphore mode: one read takes one poke, as one recv takes one
/// datagram).
/// The counts live in one word: threads parked in the high half, pokes sent and not yet
/// taken (wakes in flight) in the low half. submit() pokes only while the parked threads
/// outnumber the wakes in flight, so a poke is a credit for one parked thread.
///
/// The hole. A taker that is awake looks at the shared socket too, without blocking, on its
/// way back to the ring (as chapter 02's pool threads do, to see a stop pill), and takes
/// any poke it finds there, giving the credit back. A poke sent for a parked sibling can
/// be eaten that way; the sibling then sleeps with a job in the ring and no wake coming.
class Lane {
 public:
  struct Hooks {
    /// Run by a parking taker whose re-check found the ring empty, just before it blocks:
    /// held there it counts as parked but cannot read a poke.
    std::function<void()> before_block;
    /// Run by a woken taker right after it left the parked count and gave its credit back,
    /// before it looks at the socket and the ring again.
    std::function<void()> after_wake;
    /// Run by a taker that has just taken a job, before pass_wake_on(): held there, it has
    /// looked at the socket already, and a poke sent now stays in flight for a parked sibling.
    std::function<void()> after_take;
  };
  explicit Lane(Hooks hooks = {});

  /// The producer: push, fence, poke one parked taker if none is on its way.
  void submit(int job);
  /// A taker: the next job, waiting for at most `limit`; nullopt if none came in time.
  std::optional<int> take(std::chrono::milliseconds limit);

  /// Snapshots for tests.
  int parked() const noexcept;
  int wakes_in_flight() const noexcept;
  std::uint64_t pokes_eaten() const noexcept;    ///< pokes an awake taker's look took
  std::uint64_t chained_wakes() const noexcept;  ///< pokes sent by pass_wake_on

 private:
  friend struct LaneModel;  // the grader's model reads the ring and the word when its threads end
  enum class Waker { submit, chain };
  /// Poke the socket once if the parked threads outnumber the wakes in flight.
  void wake_one_if_parked(Waker waker);
  /// A taker's look at the socket, without blocking: takes every poke it finds.
  void poll_lane();
  /// Announce, fence, re-check, block. A job if the re-check found one.
  std::optional<int> park(std::chrono::milliseconds limit);
  /// THE EXERCISE (starter/, solution/): called by a taker that has just taken a job. Its
  /// poll_lane() may have given a stolen credit back just before its pop.
  void pass_wake_on();

  handoff::sync::MpmcRing<int, Atoms> ring_{8};
  Atoms::atomic<std::uint64_t> wait_word_{0};  // parked (high half), wakes in flight (low half)
  Wake wake_;                                  // the shared wake
  Hooks hooks_;
  Atoms::atomic<std::uint64_t> pokes_eaten_{0}, chained_wakes_{0};
};

}  // namespace exercise
