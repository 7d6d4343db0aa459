// exercises/05-stack-per-worker/learners: every move counted as done ("a refused move is not
// an error, so there is nothing to check"). It is not an error, but it is not a move either:
// the counts then say sockets are in the worker's stack that are still in the shared one.
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  if (!onload_.available()) return;
  own_stack_ = onload_.name_thread_stack(stack_name().c_str()) == 0;
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (own_stack_) {
    (void)onload_.move_fd(fd);  // refused or not, the socket is served below
    ++counts_.stack_moves;
  }
  serve_(fd);
}

}  // namespace exercise
