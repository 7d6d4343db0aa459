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
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  const std::string ip = (host == "localhost") ? "127.0.0.1" : host;
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) {
    throw std::system_error(EINVAL, std::generic_category(), "bad IPv4 address: " + host);
  }
  Listener l;
  l.fd_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!l.fd_) fail("socket");
  int one = 1;
  ::setsockopt(l.fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) ::setsockopt(l.fd_.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (::bind(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind");
  if (::listen(l.fd_.get(), SOMAXCONN) != 0) fail("listen");
  socklen_t len = sizeof addr;
  ::getsockname(l.fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  l.port_ = ntohs(addr.sin_port);
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
