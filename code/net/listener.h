// net/listener: a non-blocking TCP listening socket and its accept (chapter 01).
// Role: open the port every stage serves on and hand out accepted, non-blocking,
// TCP_NODELAY connections; say when accept must back off for lack of descriptors.
#pragma once

#include <cstdint>
#include <string>

#include "net/fd.h"

namespace handoff::net {

class Listener {
 public:
  /// Bind and listen on host:port (port 0 picks a free one). With `reuse_port`, several
  /// listeners may share the port and the kernel spreads connections across them.
  /// Throws std::system_error on failure.
  static Listener open(const std::string& host, std::uint16_t port, bool reuse_port);

  int fd() const noexcept { return fd_.get(); }
  std::uint16_t port() const noexcept { return port_; }
  void close() noexcept { fd_.reset(); }

  enum class Accept { ok, again, out_of_fds, error };
  /// Accept one connection (non-blocking, close-on-exec, TCP_NODELAY set) into `out`.
  /// `again`: nothing pending. `out_of_fds`: EMFILE/ENFILE, the caller should stop
  /// accepting for a while rather than spin on a readiness it cannot serve.
  Accept accept(Fd& out) noexcept;

 private:
  Fd fd_;
  std::uint16_t port_ = 0;
};

}  // namespace handoff::net
