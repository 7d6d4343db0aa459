// net/tests/listen_address_test: --host and --port as the address a listener binds
// (chapter 01): literals of both families, brackets, names, and why a host is refused.
#include "net/listen_address.h"

#include <catch2/catch.hpp>
#include <string>

#include "net/listener.h"

using handoff::net::AddressError;
using handoff::net::ListenAddress;

TEST_CASE("listen_address: IPv4 and IPv6 literals, bracketed or not, print as a URL writes them",
          "[listen_address][ch01]") {
  CHECK(ListenAddress::resolve("127.0.0.1", 8080).text() == "127.0.0.1:8080");
  CHECK(ListenAddress::resolve("::1", 8080).text() == "[::1]:8080");
  CHECK(ListenAddress::resolve("[::1]", 8080).text() == "[::1]:8080");
  CHECK(ListenAddress::resolve("::", 0).host_text() == "[::]");
  CHECK(ListenAddress::resolve("::", 0).is_ipv6_any());
  CHECK_FALSE(ListenAddress::resolve("::1", 0).is_ipv6_any());
  CHECK_FALSE(ListenAddress::resolve("0.0.0.0", 0).is_ipv6());
  ListenAddress a = ListenAddress::resolve("::1", 0);
  a.set_port(443);
  CHECK(a.port() == 443);
  CHECK(a.text() == "[::1]:443");
}

TEST_CASE("listen_address: localhost is looked up and listens on an address of its own", "[listen_address][ch01]") {
  const ListenAddress a = ListenAddress::resolve("localhost", 80);
  CHECK((a.host_text() == "127.0.0.1" || a.host_text() == "[::1]"));
}

TEST_CASE("listen_address: what looks like a literal but is none is refused without a lookup",
          "[listen_address][ch01]") {
  for (const char* host : {"300.1.1.1", "1.2.3", "::g", "[::1", ""}) {
    INFO("host '" << host << "'");
    try {
      ListenAddress::resolve(host, 0);
      FAIL("accepted");
    } catch (const AddressError& e) {
      CHECK(e.kind() == AddressError::Kind::not_an_address);
      CHECK(e.reason() == "not an IPv4 or IPv6 address");
    }
  }
}

TEST_CASE("listen_address: a name nobody knows is an unknown host", "[listen_address][ch01]") {
  try {
    ListenAddress::resolve("no-such-host.invalid", 0);
    FAIL("resolved");
  } catch (const AddressError& e) {
    CHECK(e.kind() == AddressError::Kind::unknown_host);
    CHECK_FALSE(e.reason().empty());
  }
}

TEST_CASE("listen_address: a listener on :: is dual-stack, on ::1 and IPv4 it is not", "[listen_address][ch01]") {
  try {
    CHECK(handoff::net::Listener::open("::", 0, false).dual_stack());
    CHECK_FALSE(handoff::net::Listener::open("::1", 0, false).dual_stack());
  } catch (const std::system_error& e) {
    WARN("no IPv6 here: " << e.what());
  }
  CHECK_FALSE(handoff::net::Listener::open("127.0.0.1", 0, false).dual_stack());
}
