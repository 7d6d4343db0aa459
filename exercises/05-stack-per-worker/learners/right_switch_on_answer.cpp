// exercises/05-stack-per-worker/learners: a correct answer that keeps Onload's answers in
// named constants and counts with a switch.
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  if (onload_.available()) {
    const int answer = onload_.name_thread_stack(stack_name().c_str());
    own_stack_ = answer == 0;
  }
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (own_stack_) {
    switch (onload_.move_fd(fd)) {
      case 0:
        ++counts_.stack_moves;
        break;
      default:  // refused: still a good socket, where it was
        ++counts_.moves_refused;
        break;
    }
  }
  serve_(fd);
}

}  // namespace exercise
