// exercises/05-stack-per-worker/learners: a name taken unless Onload answered -1 ("-1 is
// what failure looks like"). The contract is 0 on success; a refusal may come back as
// another negative code (a negative errno), and the worker then believes in a stack it
// does not have and moves every socket into the shared one.
#include "worker_stack.h"

namespace exercise {

void WorkerStack::start() {
  if (!onload_.available()) return;
  own_stack_ = onload_.name_thread_stack(stack_name().c_str()) != -1;
}

void WorkerStack::adopt(int fd) {
  ++counts_.adopted;
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
