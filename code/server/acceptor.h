// server/acceptor: the pool topology's acceptor, dealing its accepted sockets to the workers (chapter 05).
// Role: one worker accepts for all from the one listener and deals round robin: its n-th
// accepted socket goes to targets[n % size], adopted directly when that is the accepting
// worker, else handed to that worker's inbox (server/socket_inbox) through Worker::hand_in.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "net/fd.h"

namespace handoff::server {

class Worker;

/// The dealing of one accepting worker. Loop thread of that worker only.
class Acceptor {
 public:
  /// Deal to `targets` (the accepting worker included, normally). Empty (the default): the
  /// accepting worker adopts everything it accepts. Before its loop starts.
  void deal_to(std::vector<Worker*> targets) { targets_ = std::move(targets); }
  /// Give `fd`, just accepted by `self`, to its worker.
  void deal(net::Fd fd, Worker& self);

 private:
  std::vector<Worker*> targets_;
  std::size_t next_ = 0;
};

}  // namespace handoff::server
