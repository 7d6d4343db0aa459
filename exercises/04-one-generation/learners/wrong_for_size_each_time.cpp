// exercises/04-one-generation/learners: a turn that counts with a for loop against the
// queue's size ("run ready_.size() callbacks"). The size is read again at each step, while
// each run takes one off the front and may put more on the back: the turn runs a number of
// callbacks that depends on what they schedule.
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  poll_step(ready_.empty() && !stopping_);
  for (std::size_t i = 0; i < ready_.size(); ++i) run_front();
}

}  // namespace exercise
