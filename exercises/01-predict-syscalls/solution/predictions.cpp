// exercises/01-predict-syscalls/solution: the counts, and where each one comes from.
#include "predictions.h"

namespace exercise {

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one count
// missed, as a learner might: the drain's last, empty recv left out (PREDICT_NO_EMPTY_RECV),
// or the loop's wait for the completion (PREDICT_ONE_POOL_WAIT).
Predictions predictions() {
  Predictions p;
  // Inline: the handler runs on the loop thread; nothing crosses a hand-off.
  p.inline_dispatch.loop_handoff_sends = 0;
  p.inline_dispatch.loop_handoff_recvs = 0;
  p.inline_dispatch.pool_handoff_sends = 0;
  p.inline_dispatch.pool_handoff_recvs = 0;
  // One wait per request: the loop blocks until the request arrives, answers it on the
  // spot, and blocks again for the next.
  p.inline_dispatch.loop_waits = 1;

  // Pool: the loop sends the job into the lane (DatagramPool::submit, 1 send).
  p.pool_dispatch.loop_handoff_sends = 1;
  // drain_completions receives until the channel is empty: the frame, then an EAGAIN.
#if defined(PREDICT_NO_EMPTY_RECV)
  p.pool_dispatch.loop_handoff_recvs = 1;
#else
  p.pool_dispatch.loop_handoff_recvs = 2;
#endif
  // A pool thread sends one frame back (a whole response is one frame).
  p.pool_dispatch.pool_handoff_sends = 1;
  // The pool thread that takes the job was blocked in recv on the lane: one receive.
  p.pool_dispatch.pool_handoff_recvs = 1;
  // Two waits: one for the request to arrive, one for the pool's completion.
#if defined(PREDICT_ONE_POOL_WAIT)
  p.pool_dispatch.loop_waits = 1;
#else
  p.pool_dispatch.loop_waits = 2;
#endif
  return p;
}

}  // namespace exercise
