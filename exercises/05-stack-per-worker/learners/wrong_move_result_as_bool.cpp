// exercises/05-stack-per-worker/learners: the move's answer read as a bool ("if it moved").
// 0 is success: every move is counted refused and every refusal counted a move.
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  if (!onload_.available()) return;
  own_stack_ = onload_.name_thread_stack(stack_name().c_str()) == 0;
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (own_stack_) {
    if (onload_.move_fd(fd)) {
      ++counts_.stack_moves;
    } else {
      ++counts_.moves_refused;
    }
  }
  serve_(fd);
}

}  // namespace exercise
