// exercises/01-predict-syscalls/learners: counts a wait for the client socket to turn writable before each answer
// (chapter 01; a learner's predictions the tests must fail).
#include "predictions.h"

namespace exercise {

Predictions predictions() {
  Predictions p;
  p.inline_dispatch.loop_handoff_sends = 0;
  p.inline_dispatch.loop_handoff_recvs = 0;
  p.inline_dispatch.pool_handoff_sends = 0;
  p.inline_dispatch.pool_handoff_recvs = 0;
  // A wait for the request, and one for the socket to take the answer.
  p.inline_dispatch.loop_waits = 2;

  p.pool_dispatch.loop_handoff_sends = 1;
  p.pool_dispatch.loop_handoff_recvs = 2;
  p.pool_dispatch.pool_handoff_sends = 1;
  p.pool_dispatch.pool_handoff_recvs = 1;
  // The request, the completion, and the socket writable for the answer.
  p.pool_dispatch.loop_waits = 3;
  return p;
}

}  // namespace exercise
