// exercises/01-predict-syscalls/learners: sends the job and then a separate wake for the pool, as a queue beside an eventfd would
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

  // Pool: the job, then a poke to wake a parked thread: two sends.
  p.pool_dispatch.loop_handoff_sends = 2;
  p.pool_dispatch.loop_handoff_recvs = 2;
  p.pool_dispatch.pool_handoff_sends = 1;
  // The woken thread reads the poke, then the job.
  p.pool_dispatch.pool_handoff_recvs = 2;
  p.pool_dispatch.loop_waits = 2;
  return p;
}

}  // namespace exercise
