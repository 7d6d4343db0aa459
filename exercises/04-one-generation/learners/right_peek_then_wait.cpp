// exercises/04-one-generation/learners: polls without waiting first, and waits only if that found nothing to run
// (chapter 04; a learner's answer the tests must pass).
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  poll_step(false);
  if (ready() == 0 && !stopping_) poll_step(true);        // nothing at all to do: wait for a socket
  for (std::size_t n = ready(); n > 0; --n) run_front();  // this generation only
}

}  // namespace exercise
