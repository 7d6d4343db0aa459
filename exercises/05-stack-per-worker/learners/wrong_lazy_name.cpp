// exercises/05-stack-per-worker/learners: names the stack at the first adopt, not at start
// (chapter 05; a learner's answer the tests must fail).
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
  if (counts_.adopted == 1 && onload_.available()) {  // name the stack when the first socket needs it
    own_stack_ = onload_.name_thread_stack(stack_name().c_str()) == 0;
  }
  if (own_stack_) {
    if (onload_.move_fd(fd) == 0) {
      ++counts_.stack_moves;
    } else {
      ++counts_.moves_refused;
    }
  }
  serve_(fd);
}

}  // namespace exercise
