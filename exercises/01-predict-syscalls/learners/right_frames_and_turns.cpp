// exercises/01-predict-syscalls/learners: works each count out from one frame per answer and one drain per turn, as expressions
// (chapter 01; a learner's predictions the tests must pass).
#include "predictions.h"

namespace exercise {

Predictions predictions() {
  Predictions p;
  // Inline: the handler runs on the loop thread; nothing crosses a hand-off, and the loop
  // blocks once per request, for the request.
  p.inline_dispatch.loop_handoff_sends = 0.0;
  p.inline_dispatch.loop_handoff_recvs = 0.0;
  p.inline_dispatch.pool_handoff_sends = 0.0;
  p.inline_dispatch.pool_handoff_recvs = 0.0;
  p.inline_dispatch.loop_waits = 1.0;

  constexpr double kFrames = 1;     // GET / is one whole response: one frame back
  constexpr double kJobs = 1;       // one job into the lane per request
  constexpr double kEmptyRecv = 1;  // the drain stops only on a recv that finds nothing
  p.pool_dispatch.loop_handoff_sends = kJobs;
  p.pool_dispatch.loop_handoff_recvs = kFrames + kEmptyRecv;
  p.pool_dispatch.pool_handoff_sends = kFrames;
  p.pool_dispatch.pool_handoff_recvs = kJobs;  // a blocking recv wakes with the job: no empty one
  p.pool_dispatch.loop_waits = 1.0 + 1.0;     // for the request, then for the completion
  return p;
}

}  // namespace exercise
