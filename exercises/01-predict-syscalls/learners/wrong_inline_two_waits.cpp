// exercises/01-predict-syscalls/learners: counts a wait for the request and one for the answer, inline too
// (chapter 01; a learner's predictions the tests must fail).
#include "predictions.h"

namespace exercise {

Predictions predictions() {
  Predictions p;
  // Inline: the handler runs on the loop thread; nothing crosses a hand-off.
  p.inline_dispatch.loop_handoff_sends = 0;
  p.inline_dispatch.loop_handoff_recvs = 0;
  p.inline_dispatch.pool_handoff_sends = 0;
  p.inline_dispatch.pool_handoff_recvs = 0;
  // One wait per request: the loop blocks until the request arrives, answers it on the
  // spot, and blocks again for the next.
  p.inline_dispatch.loop_waits = 2;

  // Pool: the loop sends the job into the lane (DatagramPool::submit, 1 send).
  p.pool_dispatch.loop_handoff_sends = 1;
  // drain_completions receives until the channel is empty: the frame, then an EAGAIN.
  p.pool_dispatch.loop_handoff_recvs = 2;
  // A pool thread sends one frame back (a whole response is one frame).
  p.pool_dispatch.pool_handoff_sends = 1;
  // The pool thread that takes the job was blocked in recv on the lane: one receive.
  p.pool_dispatch.pool_handoff_recvs = 1;
  // Two waits: one for the request to arrive, one for the pool's completion.
  p.pool_dispatch.loop_waits = 2;
  return p;
}

}  // namespace exercise
