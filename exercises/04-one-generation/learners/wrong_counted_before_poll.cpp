// exercises/04-one-generation/learners: counts the generation, then polls, then runs it
// (chapter 04; a learner's answer the tests must fail).
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  const std::size_t n = ready();  // what this turn owes
  poll_step(n == 0 && !stopping_);
  for (std::size_t i = 0; i < n; ++i) run_front();
}

}  // namespace exercise
