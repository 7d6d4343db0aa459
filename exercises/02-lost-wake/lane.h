// exercises/02-lost-wake: one lane of a pool, cut down to its park and its wake.
#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include "sync/mpmc_ring.h"

// The seam. The tests build the lane on the standard atomics (sync/atomics.h) and an eventfd
// (wake.h); the grader's model (model/lane_model.cpp) builds lane.cpp and your park.cpp once
// more on Relacy's atomics and a counted wake: it defines EXERCISE_MODEL_SEAM and its own
// exercise::Atoms and exercise::Wake before it includes this header. Write atomics as the
// members below are (parked_.fetch_add(...)) and fences as std::atomic_thread_fence(...):
// the model sees both.
#ifndef EXERCISE_MODEL_SEAM
#include "sync/atomics.h"
#include "wake.h"
namespace exercise {
using Atoms = handoff::sync::StdAtomics;
using Wake = EventfdWake;
}  // namespace exercise
#endif

namespace exercise {

/// Jobs are ints in a ring. A taker that finds the ring empty parks on a wake (an eventfd);
/// submit() pushes, then pokes the wake if anyone said they were parked.
class Lane {
 public:
  /// `between_steps` runs between the two steps of a park (the tests use it to hold the
  /// taker inside the window a race needs); empty in real use.
  explicit Lane(std::function<void()> between_steps = {});
  void submit(int job);
  /// A job, waiting for one for at most `limit`; nullopt if none came in time.
  std::optional<int> take(std::chrono::milliseconds limit);

 private:
  friend struct LaneModel;  // the grader's model reads the ring and the count when its threads end

  /// The park: announce, re-check, block (wake_.wait). Returns a job if the re-check found
  /// one; sets `timed_out` when the wait ended with no poke.
  std::optional<int> park(std::chrono::milliseconds limit, bool& timed_out);

  handoff::sync::MpmcRing<int, Atoms> ring_{8};
  Atoms::atomic<int> parked_{0};
  Wake wake_;
  std::function<void()> between_steps_;
};

}  // namespace exercise
