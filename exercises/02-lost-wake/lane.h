// exercises/02-lost-wake: one lane of a pool, cut down to its park and its wake.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "net/fd.h"
#include "sync/mpmc_ring.h"

namespace exercise {

/// Jobs are ints in a ring. A taker that finds the ring empty parks on an eventfd; submit()
/// pushes, then pokes the eventfd if anyone said they were parked.
class Lane {
 public:
  /// `between_steps` runs between the two steps of a park (the tests use it to hold the
  /// taker inside the window a race needs); empty in real use.
  explicit Lane(std::function<void()> between_steps = {});
  void submit(int job);
  /// A job, waiting for one for at most `limit`; nullopt if none came in time.
  std::optional<int> take(std::chrono::milliseconds limit);

 private:
  /// The park: announce, re-check, block. Returns a job if the re-check found one.
  std::optional<int> park(std::chrono::milliseconds limit, bool& timed_out);

  handoff::sync::MpmcRing<int> ring_{64};
  std::atomic<int> parked_{0};
  handoff::net::Fd wake_;  // an eventfd: submit writes, a parked taker reads
  std::function<void()> between_steps_;
};

}  // namespace exercise
