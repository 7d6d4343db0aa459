// exercises/05-stack-per-worker/solution: name the thread's stack once, at start; move each
// socket into it before the first read; serve it whether or not the move was allowed.
#include "worker_stack.h"

namespace exercise {

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one part
// wrong, as a learner might: the socket read before the move (MOVE_AFTER_READ), so every
// move is refused; a refused name taken for a stack of its own (NAME_REFUSAL_IGNORED); a
// socket whose move was refused dropped instead of served (REFUSED_MOVE_DROPS_SOCKET).
void WorkerStack::start() {
  if (!onload_.available()) return;  // not under Onload: nothing to call
  // Thread scope: the name applies to this thread only, so it is set on the worker's own
  // thread, once, before any socket is moved here.
#if defined(NAME_REFUSAL_IGNORED)
  onload_.name_thread_stack(stack_name().c_str());
  own_stack_ = true;
#else
  own_stack_ = onload_.name_thread_stack(stack_name().c_str()) == 0;
#endif
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
#if defined(MOVE_AFTER_READ)
  serve_(fd);  // the first read happens in the listener's stack, and the move is refused
#endif
  if (own_stack_) {
    // Onload moves a socket only before its first read or send: here, before serve_.
    if (onload_.move_fd(fd) == 0) {
      ++counts_.stack_moves;
    } else {
      ++counts_.moves_refused;  // still a good socket, in the shared stack: serve it there
#if defined(REFUSED_MOVE_DROPS_SOCKET)
      return;
#endif
    }
  }
#if !defined(MOVE_AFTER_READ)
  serve_(fd);
#endif
}

}  // namespace exercise
