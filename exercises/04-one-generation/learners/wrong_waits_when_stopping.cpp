// exercises/04-one-generation/learners: lets the poll wait whenever nothing is ready, a pending stop or not
// (chapter 04; a learner's answer the tests must fail).
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  poll_step(ready() == 0);
  const std::size_t n = ready();
  for (std::size_t i = 0; i < n; ++i) run_front();
}

}  // namespace exercise
