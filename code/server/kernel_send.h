// server/kernel_send: the kernel side of a connection's send seam: sendmsg(2) (chapter 01).
// Role: send the queue's front pieces in one sendmsg, the head and the body as separate
// iovecs; the kernel holds nothing on our behalf that we must push later.
#pragma once

#include "server/send_side.h"

namespace handoff::server {

/// Sends straight to the connection's socket. Cost: one system call per send().
class KernelSend final : public SendSide {
 public:
  explicit KernelSend(int fd) noexcept : fd_(fd) {}
  Sent send(OutQueue& out, stats::ThreadStats& stats) override;
  std::size_t queued() const noexcept override { return 0; }
  std::size_t push(stats::ThreadStats&) override { return 0; }
  bool failed() const noexcept override { return false; }
  void close(net::Fd& fd) noexcept override { fd.reset(); }

 private:
  int fd_;  // the connection's socket (owned by the connection)
};

}  // namespace handoff::server
