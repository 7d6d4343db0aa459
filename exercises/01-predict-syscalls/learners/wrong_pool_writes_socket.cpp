// exercises/01-predict-syscalls/learners: has the pool thread write the answer to the client itself, so nothing comes back to the loop
// (chapter 01; a learner's predictions the tests must fail).
#include "predictions.h"

namespace exercise {

Predictions predictions() {
  Predictions p;
  p.inline_dispatch.loop_handoff_sends = 0;
  p.inline_dispatch.loop_handoff_recvs = 0;
  p.inline_dispatch.pool_handoff_sends = 0;
  p.inline_dispatch.pool_handoff_recvs = 0;
  p.inline_dispatch.loop_waits = 1;

  // Pool: the job goes out; the pool thread answers the client on its own socket.
  p.pool_dispatch.loop_handoff_sends = 1;
  p.pool_dispatch.loop_handoff_recvs = 0;
  p.pool_dispatch.pool_handoff_sends = 0;
  p.pool_dispatch.pool_handoff_recvs = 1;
  p.pool_dispatch.loop_waits = 1;
  return p;
}

}  // namespace exercise
