// exercises/04-one-generation/learners: a correct turn that counts the generation once, after
// the poll, in a for loop's initializer.
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  const bool may_wait = ready_.empty() && !stopping_;
  poll_step(may_wait);
  for (std::size_t left = ready_.size(); left > 0; --left) run_front();
}

}  // namespace exercise
