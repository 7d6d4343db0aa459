// server/kernel_send: the kernel side of a connection's send seam: sendmsg(2) (chapter 01).
#include "server/kernel_send.h"

#include <sys/socket.h>

#include <cerrno>

namespace handoff::server {

// [kernel_send.send]
SendSide::Sent KernelSend::send(OutQueue& out, stats::ThreadStats& stats) {
  iovec iov[64];
  const OutQueue::Gathered g = out.gather(iov);
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = g.count;
  for (;;) {
    // sendmsg rather than writev: MSG_NOSIGNAL turns a vanished peer into EPIPE instead
    // of a process-killing SIGPIPE, without touching process-wide signal state.
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    stats.add(stats::Counter::syscalls);
    if (n >= 0) {
      out.consume(static_cast<std::size_t>(n));
      return Sent{.bytes = static_cast<std::size_t>(n)};
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Sent{.blocked = true};  // the output edge resumes us
    return Sent{.failed = true};
  }
}
// [kernel_send.send]

}  // namespace handoff::server
