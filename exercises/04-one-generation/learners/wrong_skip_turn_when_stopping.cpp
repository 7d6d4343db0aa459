// exercises/04-one-generation/learners: a turn that does nothing once a stop is pending
// ("stopping means stop now"). asyncio's run_forever, asked to stop, still runs one more
// turn: its poll without a wait and the generation that was ready.
#include "turn_loop.h"

namespace exercise {

void TurnLoop::run_once() {
  if (stopping_) return;
  poll_step(ready_.empty());
  std::size_t ntodo = ready_.size();
  while (ntodo-- > 0) run_front();
}

}  // namespace exercise
