// exercises/04-one-generation/learners: polls, then runs one callback
// (chapter 04; a learner's answer the tests must fail).
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  poll_step(ready() == 0 && !stopping_);
  if (ready() > 0) run_front();  // one at a time: the poll is never far away
}

}  // namespace exercise
