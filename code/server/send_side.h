// server/send_side: the seam a connection's answers leave through (chapter 01).
// Changed in chapter 05: queued(), push(), failed() and close(), which the stack side needs.
// Role: one interface with two sides, chosen once per connection when it is made: the
// kernel's socket (server/kernel_send, sendmsg(2)) or chapter 05's model of a user-level
// stack (server/stack_send). Connection::flush() calls send() until the queue is empty or
// the side says to wait for the output edge; it never asks which side it has.
#pragma once

#include <cstddef>

#include "net/fd.h"
#include "server/out_queue.h"
#include "stats/thread_stats.h"

namespace handoff::server {

/// Where one connection's bytes go. Loop thread of the connection only.
class SendSide {
 public:
  /// What one send() did.
  struct Sent {
    std::size_t bytes = 0;  ///< taken from the front of the queue (and consumed from it)
    bool blocked = false;   ///< wait for the output edge before the next send
    bool failed = false;    ///< the peer is gone: close
  };

  virtual ~SendSide() = default;
  /// One send from the front of a non-empty `out`; what it took is consumed from `out`.
  virtual Sent send(OutQueue& out, stats::ThreadStats& stats) = 0;
  /// Bytes this side took and the kernel has not yet (always 0 on the kernel side).
  virtual std::size_t queued() const noexcept = 0;
  /// Send what this side still holds; returns what it holds after. On the output edge, and
  /// before the connection counts every answer out.
  virtual std::size_t push(stats::ThreadStats& stats) = 0;
  /// A send this side took failed later (the peer is gone).
  virtual bool failed() const noexcept = 0;
  /// Close the connection's socket `fd` (last, from the connection's destructor).
  virtual void close(net::Fd& fd) noexcept = 0;
};

}  // namespace handoff::server
