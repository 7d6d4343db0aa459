// exercises/04-one-generation/learners: runs the generation first, then polls
// (chapter 04; a learner's answer the tests must fail).
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  const std::size_t n = ready();
  for (std::size_t i = 0; i < n; ++i) run_front();
  poll_step(ready() == 0 && !stopping_);  // the readers it finds run next turn
}

}  // namespace exercise
