// exercises/04-one-generation/solution: poll first, waiting only when nothing is ready; then
// run one generation, counted when the poll has returned.
#include "turn_loop.h"

namespace exercise {

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one part of
// the answer changed, as a learner might: the generation counted before the poll
// (GENERATION_READ_EARLY) or read again after each callback (GENERATION_READ_LATE), the
// poll allowed to wait while callbacks are ready (POLL_BLOCKS_WHEN_READY) or never
// (POLL_NEVER_BLOCKS).
void TurnLoop::run_once() {
#if defined(GENERATION_READ_EARLY)
  std::size_t ntodo = ready_.size();
#endif
#if defined(POLL_BLOCKS_WHEN_READY)
  poll_step(!stopping_);
#elif defined(POLL_NEVER_BLOCKS)
  poll_step(false);
#else
  // Wait only when nothing is ready (a wait would hold ready callbacks back for nothing)
  // and no stop is pending (the run ends after this turn; asyncio's timeout 0).
  poll_step(ready_.empty() && !stopping_);
#endif
#if !defined(GENERATION_READ_EARLY)
  // The generation: what is queued now, the readers this poll found included. What it
  // schedules queues behind it and waits for the next turn, after the next poll.
  std::size_t ntodo = ready_.size();
#endif
  while (ntodo > 0) {
    run_front();
#if defined(GENERATION_READ_LATE)
    ntodo = ready_.size();
#else
    --ntodo;
#endif
  }
}

}  // namespace exercise
