// exercises/01-predict-syscalls/learners: divides the pool's counts between its two threads, as if each took every other job
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

  p.pool_dispatch.loop_handoff_sends = 1;
  p.pool_dispatch.loop_handoff_recvs = 2;
  // Two pool threads share the jobs: half a receive and half a send each, per request.
  p.pool_dispatch.pool_handoff_sends = 0.5;
  p.pool_dispatch.pool_handoff_recvs = 0.5;
  p.pool_dispatch.loop_waits = 2;
  return p;
}

}  // namespace exercise
