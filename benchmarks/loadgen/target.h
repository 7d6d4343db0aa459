// loadgen/target: the URL the generator loads, and the loopback-only guard (chapter 01).
// Role: parse http://HOST:PORT/path into a socket address, refusing every host that is
// not this machine's loopback, so that the generator can never send traffic elsewhere.
#pragma once

#include <sys/socket.h>
#include <cstdint>
#include <string>
#include <string_view>

namespace handoff::loadgen {

/// Where the requests go.
///
/// Guarantee: a Target exists only for a loopback address: 127.0.0.0/8, "localhost"
/// (taken as 127.0.0.1 without asking any resolver) or [::1]. parse_target() throws
/// std::invalid_argument, with a message that names the reason, for anything else.
struct Target {
  std::string url;          ///< as given
  std::string host_header;  ///< the authority as written, for the Host header
  std::string path;         ///< origin-form request target, starts with '/'
  std::uint16_t port = 80;
  sockaddr_storage address{};
  socklen_t address_length = 0;
};

Target parse_target(std::string_view url);

}  // namespace handoff::loadgen
