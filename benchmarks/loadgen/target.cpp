// loadgen/target: the URL the generator loads, and the loopback-only guard (chapter 01).
// Role: the URL grammar we accept (http, no userinfo, numeric loopback or localhost).
#include "loadgen/target.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>

namespace handoff::loadgen {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

[[noreturn]] void refuse(std::string_view url, const std::string& why) {
  throw std::invalid_argument("bad --url '" + std::string(url) + "': " + why);
}

[[noreturn]] void refuse_host(std::string_view url, std::string_view host) {
  refuse(url,
         "loadgen only sends to this machine's loopback (127.0.0.0/8, localhost, [::1]);"
         " refusing host '" +
             std::string(host) + "'");
}

}  // namespace

Target parse_target(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.size() < kScheme.size() || !iequals(url.substr(0, kScheme.size()), kScheme)) {
    refuse(url, "expected http://HOST:PORT/path (https and other schemes are not supported)");
  }
  Target target;
  target.url = std::string(url);
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  std::string path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (const auto hash = path.find('#'); hash != std::string::npos) path.erase(hash);
  if (path.empty() || path[0] != '/') path.insert(path.begin(), '/');
  for (const char c : path) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) refuse(url, "the path holds a space or control byte");
  }
  target.path = std::move(path);

  if (authority.empty()) refuse(url, "no host");
  if (authority.find('@') != std::string_view::npos) refuse(url, "user information is not supported");
  target.host_header = std::string(authority);

  std::string_view host;
  std::string_view port;
  bool bracketed = false;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) refuse(url, "unterminated '[' in the host");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') refuse(url, "unexpected text after ']'");
      port = after.substr(1);
    }
    bracketed = true;
  } else {
    const std::size_t colon = authority.rfind(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (!port.empty() || authority.back() == ':') {
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      refuse(url, "the port must be a number from 1 to 65535");
    }
    const unsigned long value = std::stoul(std::string(port));
    if (value == 0 || value > 65535) refuse(url, "the port must be a number from 1 to 65535");
    target.port = static_cast<std::uint16_t>(value);
  }

  const std::string host_text(host);
  if (bracketed) {
    sockaddr_in6 sin6{};
    sin6.sin6_family = AF_INET6;
    sin6.sin6_port = htons(target.port);
    if (inet_pton(AF_INET6, host_text.c_str(), &sin6.sin6_addr) != 1 || !IN6_IS_ADDR_LOOPBACK(&sin6.sin6_addr)) {
      refuse_host(url, host);
    }
    std::memcpy(&target.address, &sin6, sizeof sin6);
    target.address_length = sizeof sin6;
    return target;
  }
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(target.port);
  if (iequals(host, "localhost")) {
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  } else {
    // inet_pton accepts only the dotted-quad form, so "127.1" or "0x7f.1" cannot
    // smuggle in a different reading of the address.
    if (inet_pton(AF_INET, host_text.c_str(), &sin.sin_addr) != 1) refuse_host(url, host);
    if ((ntohl(sin.sin_addr.s_addr) >> 24) != 127) refuse_host(url, host);
  }
  std::memcpy(&target.address, &sin, sizeof sin);
  target.address_length = sizeof sin;
  return target;
}

}  // namespace handoff::loadgen
