// server/stack_send: the stack side of a connection's send seam: chapter 05's user-level stack model (chapter 05).
// Role: send through the socket's stack (ServerOptions::stack_model), which accepts every
// byte at once: whatever the kernel does not take waits in the socket's send queue, and a
// send made while another worker holds the stack lock waits for that holder to transmit it.
// The socket is closed through the stack, so no deferred send lands on a reused number.
#pragma once

#include "server/send_side.h"
#include "stack/network_stack.h"

namespace handoff::server {

/// Sends through one socket of a (possibly shared) NetworkStack. Cost: the stack lock per
/// send() and, unless the send is deferred to the lock's holder, one send(2).
class StackSend final : public SendSide {
 public:
  /// `stack` outlives this side; `fd` is the connection's socket.
  StackSend(stack::NetworkStack& stack, int fd) : stack_(stack), socket_(fd) {}
  Sent send(OutQueue& out, stats::ThreadStats& stats) override;
  std::size_t queued() const noexcept override { return socket_.queued(); }
  std::size_t push(stats::ThreadStats& stats) override { return stack_.push(socket_, &stats); }
  bool failed() const noexcept override { return socket_.error() != 0; }
  /// Through the stack: it waits for any send of ours another thread holds, so the number
  /// is not reused under it.
  void close(net::Fd& fd) noexcept override;

 private:
  stack::NetworkStack& stack_;
  stack::StackSocket socket_;
};

}  // namespace handoff::server
