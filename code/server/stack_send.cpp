// server/stack_send: the stack side of a connection's send seam: chapter 05's user-level stack model (chapter 05).
#include "server/stack_send.h"

namespace handoff::server {

namespace {
// Bytes a connection may leave in its stack (deferred sends not yet run and its send queue)
// before it waits for the output edge: above the most one holder's deferral list can hold
// (32 x 4 KiB), so a wait always has a queue behind it, whose full socket buffer the kernel
// will signal. So a client that stops reading holds at most this limit plus one answer in
// the stack, besides its budget in the connection's queue.
constexpr std::size_t kStackQueueLimit = 256 * 1024;
constexpr std::size_t kStackGather = 16;  // pieces gathered into one stack send at most
}  // namespace

// [stack_send.send]
SendSide::Sent StackSend::send(OutQueue& out, stats::ThreadStats& stats) {
  if (socket_.queued() > kStackQueueLimit) return Sent{.blocked = true};  // the output edge pushes the queue
  // One send for as many queued pieces as fit in a packet (an answer's head and body, a
  // pipelined run), as the kernel side's sendmsg takes them all; a piece larger than a
  // packet goes alone.
  iovec iov[kStackGather];
  const OutQueue::Gathered g = out.gather(iov, stack_.pool().packet_bytes());
  const stack::SendResult r = stack_.send(socket_, std::span<const iovec>(iov, g.count), &stats);
  // A send(2) made here; a deferred one is the holder's, on its thread.
  if (r.path != stack::SendPath::deferred) stats.add(stats::Counter::syscalls);
  out.consume(g.bytes);  // the stack took every byte
  return Sent{.bytes = g.bytes};
}
// [stack_send.send]

void StackSend::close(net::Fd& fd) noexcept {
  stack_.close(socket_);
  fd.release();  // closed by the stack
}

}  // namespace handoff::server
