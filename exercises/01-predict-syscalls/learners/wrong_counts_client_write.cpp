// exercises/01-predict-syscalls/learners: counts the loop's write of the answer to the client as a hand-off send
// (chapter 01; a learner's predictions the tests must fail).
#include "predictions.h"

namespace exercise {

Predictions predictions() {
  Predictions p;
  // Inline: no pool, but the loop still sends the answer out: one send per request.
  p.inline_dispatch.loop_handoff_sends = 1;
  p.inline_dispatch.loop_handoff_recvs = 0;
  p.inline_dispatch.pool_handoff_sends = 0;
  p.inline_dispatch.pool_handoff_recvs = 0;
  p.inline_dispatch.loop_waits = 1;

  // Pool: the job into the lane, and the answer to the client: two sends on the loop.
  p.pool_dispatch.loop_handoff_sends = 2;
  p.pool_dispatch.loop_handoff_recvs = 2;  // the frame, then the EAGAIN that ends the drain
  p.pool_dispatch.pool_handoff_sends = 1;
  p.pool_dispatch.pool_handoff_recvs = 1;
  p.pool_dispatch.loop_waits = 2;
  return p;
}

}  // namespace exercise
