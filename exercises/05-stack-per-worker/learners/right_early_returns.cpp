// exercises/05-stack-per-worker/learners: the same order written with early returns
// (chapter 05; a learner's answer the tests must pass).
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  own_stack_ = false;
  if (!onload_.available()) return;
  if (onload_.name_thread_stack(stack_name().c_str()) != 0) return;  // refused: stay on the shared stack
  own_stack_ = true;
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (!own_stack_) return serve_(fd);
  const int moved = onload_.move_fd(fd);  // before serve_: nothing read yet
  ++(moved == 0 ? counts_.stack_moves : counts_.moves_refused);
  serve_(fd);
}

}  // namespace exercise
