// server/acceptor: the pool topology's acceptor, dealing its accepted sockets to the workers (chapter 05).
#include "server/acceptor.h"

#include "server/worker.h"

namespace handoff::server {

void Acceptor::deal(net::Fd fd, Worker& self) {
  Worker* target = targets_.empty() ? &self : targets_[next_++ % targets_.size()];
  if (target == &self) {
    self.adopt(std::move(fd));
    return;
  }
  self.loop_stats().add(stats::Counter::conns_handed_off);
  target->hand_in(std::move(fd));
}

}  // namespace handoff::server
