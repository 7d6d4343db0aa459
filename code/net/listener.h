// net/listener: a non-blocking TCP listening socket and its accept (chapter 01).
// Role: open the port every stage serves on (IPv4 or IPv6) and hand out accepted,
// non-blocking, TCP_NODELAY connections; say when accept must back off for lack of
// descriptors.
#pragma once

#include <cstdint>
#include <string>

#include "net/fd.h"
#include "net/listen_address.h"

namespace handoff::net {

/// A non-blocking TCP listening socket that hands out accepted connections.
class Listener {
 public:
  /// Bind and listen on host:port (port 0 picks a free one). With `reuse_port`, several
  /// listeners may share the port and the kernel spreads connections across them.
  /// Throws AddressError for a host that is no address, std::system_error (its what() the
  /// call that failed: "socket", "bind", "listen") for the rest.
  static Listener open(const std::string& host, std::uint16_t port, bool reuse_port);
  /// The same on an address already resolved. The IPv6 wildcard `::` is opened dual-stack
  /// (IPV6_V6ONLY off: IPv4 clients arrive as IPv4-mapped IPv6 addresses) where the kernel allows it,
  /// else IPv6 only; every other IPv6 address is IPv6 only.
  static Listener open(const ListenAddress& address, bool reuse_port);

  /// Whether the socket accepts IPv4 clients as well as IPv6 ones (only `::`, as above).
  bool dual_stack() const noexcept { return dual_stack_; }

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
  bool dual_stack_ = false;
};

}  // namespace handoff::net
