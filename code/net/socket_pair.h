// net/socket_pair: a connected pair of AF_UNIX datagram sockets (chapter 01).
// Role: the channel every socketpair hand-off is built on (chapter 01's lanes and
// completions, chapter 02's wakes), made in one place with close-on-exec set.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "net/fd.h"

namespace handoff::net {

/// Two connected SOCK_DGRAM sockets: a datagram sent on one arrives whole on the other.
/// Throws std::system_error on failure.
inline std::pair<Fd, Fd> datagram_pair() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair");
  }
  return {Fd(sv[0]), Fd(sv[1])};
}

}  // namespace handoff::net
