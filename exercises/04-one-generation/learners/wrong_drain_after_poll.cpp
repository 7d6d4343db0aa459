// exercises/04-one-generation/learners: polls, then runs until the queue is empty
// (chapter 04; a learner's answer the tests must fail).
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  poll_step(ready() == 0 && !stopping_);
  while (ready() > 0) run_front();
}

}  // namespace exercise
