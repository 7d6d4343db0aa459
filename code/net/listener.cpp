// net/listener: a non-blocking TCP listening socket and its accept (chapter 01).
#include "net/listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <system_error>

namespace handoff::net {

namespace {
[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }
}  // namespace

Listener Listener::open(const std::string& host, std::uint16_t port, bool reuse_port) {
  return open(ListenAddress::resolve(host, port), reuse_port);
}

Listener Listener::open(const ListenAddress& address, bool reuse_port) {
  Listener l;
  l.fd_.reset(::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!l.fd_) fail("socket");
  int one = 1;
  ::setsockopt(l.fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) ::setsockopt(l.fd_.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (address.is_ipv6()) {
    // Said explicitly, not left to net.ipv6.bindv6only: `::` takes IPv4 too where it may.
    int v6only = address.is_ipv6_any() ? 0 : 1;
    const bool set = ::setsockopt(l.fd_.get(), IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) == 0;
    l.dual_stack_ = address.is_ipv6_any() && set;
  }
  if (::bind(l.fd_.get(), address.sockaddr_ptr(), address.length) != 0) fail("bind");
  if (::listen(l.fd_.get(), SOMAXCONN) != 0) fail("listen");
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(l.fd_.get(), reinterpret_cast<sockaddr*>(&bound), &len);
  l.port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                        : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  return l;
}

Listener::Accept Listener::accept(Fd& out) noexcept {
  const int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) {
      return Accept::again;
    }
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
      return Accept::out_of_fds;
    }
    return Accept::error;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  out.reset(fd);
  return Accept::ok;
}

}  // namespace handoff::net
