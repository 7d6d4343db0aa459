// exercises/05-stack-per-worker/learners: serves a socket only when its move succeeded
// (chapter 05; a learner's answer the tests must fail).
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  if (onload_.available()) own_stack_ = onload_.name_thread_stack(stack_name().c_str()) == 0;
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (!own_stack_) {
    serve_(fd);
    return;
  }
  if (onload_.move_fd(fd) == 0) {
    ++counts_.stack_moves;
    serve_(fd);
  } else {
    ++counts_.moves_refused;  // the move failed: leave the socket alone
  }
}

}  // namespace exercise
