// net/listen_address: the address a listener binds, from --host and --port (chapter 01).
// Role: turn the host a user typed (an IPv4 or IPv6 literal, bracketed or not, or a name)
// into one socket address, say why when it cannot, and write it back the way a URL does
// (`127.0.0.1:8080`, `[::1]:8080`).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace handoff::net {

/// Why a host could not become an address.
class AddressError : public std::runtime_error {
 public:
  enum class Kind {
    not_an_address,  ///< looks like a literal (digits and dots, or a colon) but is none: `300.1.1.1`
    unknown_host,    ///< a name the resolver could not turn into an address
  };
  AddressError(Kind kind, std::string host, std::string reason);
  Kind kind() const noexcept { return kind_; }
  const std::string& host() const noexcept { return host_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  Kind kind_;
  std::string host_;
  std::string reason_;
};

/// One IPv4 or IPv6 socket address to bind.
struct ListenAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  /// A literal (`127.0.0.1`, `::1`, `[::1]`, `::`) is taken as it is; anything else is a
  /// name, looked up with getaddrinfo(3) (bounded by the resolver's own timeout and
  /// attempts, resolv.conf(5)), which listens on the name's first IPv4 address, else its
  /// first IPv6 one (`localhost` is 127.0.0.1 where the hosts file says so). Throws
  /// AddressError.
  static ListenAddress resolve(const std::string& host, std::uint16_t port);

  bool is_ipv6() const noexcept { return storage.ss_family == AF_INET6; }
  /// The IPv6 wildcard `::`, which a listener makes dual-stack (net::Listener).
  bool is_ipv6_any() const noexcept;
  std::uint16_t port() const noexcept;
  void set_port(std::uint16_t port) noexcept;
  /// The host as a URL writes it: `127.0.0.1`, `[::1]`.
  std::string host_text() const;
  /// host_text() and the port: `127.0.0.1:8080`, `[::1]:8080`.
  std::string text() const;
  const sockaddr* sockaddr_ptr() const noexcept { return reinterpret_cast<const sockaddr*>(&storage); }
};

}  // namespace handoff::net
