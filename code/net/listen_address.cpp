// net/listen_address: the address a listener binds, from --host and --port (chapter 01).
#include "net/listen_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <utility>

namespace handoff::net {

AddressError::AddressError(Kind kind, std::string host, std::string reason)
    : std::runtime_error(host + ": " + reason), kind_(kind), host_(std::move(host)), reason_(std::move(reason)) {}

namespace {
/// Digits and dots only, or any colon: the user meant a literal, so no name lookup (which
/// would ask DNS about `300.1.1.1`).
bool looks_literal(const std::string& host) {
  if (host.find(':') != std::string::npos) return true;
  for (const char c : host) {
    if (c != '.' && (c < '0' || c > '9')) return false;
  }
  return true;
}

ListenAddress from(const sockaddr* sa, socklen_t len, std::uint16_t port) {
  ListenAddress a;
  std::memcpy(&a.storage, sa, len);
  a.length = len;
  a.set_port(port);
  return a;
}
}  // namespace

ListenAddress ListenAddress::resolve(const std::string& host, std::uint16_t port) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  sockaddr_in v4{};
  v4.sin_family = AF_INET;
  if (::inet_pton(AF_INET, h.c_str(), &v4.sin_addr) == 1) {
    return from(reinterpret_cast<const sockaddr*>(&v4), sizeof v4, port);
  }
  sockaddr_in6 v6{};
  v6.sin6_family = AF_INET6;
  if (::inet_pton(AF_INET6, h.c_str(), &v6.sin6_addr) == 1) {
    return from(reinterpret_cast<const sockaddr*>(&v6), sizeof v6, port);
  }
  if (h.empty() || looks_literal(h)) {
    throw AddressError(AddressError::Kind::not_an_address, host, "not an IPv4 or IPv6 address");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(h.c_str(), nullptr, &hints, &found);
  if (rc != 0) throw AddressError(AddressError::Kind::unknown_host, host, ::gai_strerror(rc));
  const addrinfo* pick = nullptr;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET) {
      pick = ai;
      break;
    }
    if (ai->ai_family == AF_INET6 && pick == nullptr) pick = ai;
  }
  if (pick == nullptr) {
    ::freeaddrinfo(found);
    throw AddressError(AddressError::Kind::unknown_host, host, "no IPv4 or IPv6 address");
  }
  ListenAddress a = from(pick->ai_addr, pick->ai_addrlen, port);
  ::freeaddrinfo(found);
  return a;
}

bool ListenAddress::is_ipv6_any() const noexcept {
  if (!is_ipv6()) return false;
  const auto& a = reinterpret_cast<const sockaddr_in6&>(storage);
  return IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr);
}

std::uint16_t ListenAddress::port() const noexcept {
  if (is_ipv6()) return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
}

void ListenAddress::set_port(std::uint16_t port) noexcept {
  if (is_ipv6()) {
    reinterpret_cast<sockaddr_in6&>(storage).sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in&>(storage).sin_port = htons(port);
  }
}

std::string ListenAddress::host_text() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (is_ipv6()) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(storage).sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]";
  }
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(storage).sin_addr, buf, sizeof buf);
  return buf;
}

std::string ListenAddress::text() const { return host_text() + ":" + std::to_string(port()); }

}  // namespace handoff::net
