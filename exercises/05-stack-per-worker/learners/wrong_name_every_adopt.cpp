// exercises/05-stack-per-worker/learners: names the stack again before every move
// (chapter 05; a learner's answer the tests must fail).
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  if (onload_.available()) own_stack_ = onload_.name_thread_stack(stack_name().c_str()) == 0;
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (own_stack_ && onload_.name_thread_stack(stack_name().c_str()) == 0) {  // make sure it is ours
    if (onload_.move_fd(fd) == 0) {
      ++counts_.stack_moves;
    } else {
      ++counts_.moves_refused;
    }
  }
  serve_(fd);
}

}  // namespace exercise
