// exercises/04-one-generation/starter: compiles, runs every callback, and holds a readable
// socket back behind a chain.
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  // Seed 003's "before": run what is queued, and what that schedules, until nothing is
  // left; then poll. Nothing is ready after a drain, so the poll waits unless a stop is
  // pending.
  while (!ready_.empty()) run_front();
  poll_step(!stopping_);
}

}  // namespace exercise
