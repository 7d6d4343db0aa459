// loadgen/tests/target_test: the URL grammar and the loopback-only guard (chapter 01).
// Role: show that only 127.0.0.0/8, localhost and [::1] are accepted, with a clear error.
#include <catch2/catch.hpp>

#include <netinet/in.h>

#include <stdexcept>
#include <string>

#include "loadgen/target.h"

using handoff::loadgen::parse_target;

TEST_CASE("loadgen: the target URL is parsed into address, Host header and path", "[loadgen][ch01]") {
  const auto t = parse_target("http://127.0.0.1:8080/a/b?x=1#frag");
  REQUIRE(t.port == 8080);
  REQUIRE(t.path == "/a/b?x=1");
  REQUIRE(t.host_header == "127.0.0.1:8080");
  REQUIRE(t.address.ss_family == AF_INET);

  const auto local = parse_target("HTTP://LocalHost");
  REQUIRE(local.port == 80);
  REQUIRE(local.path == "/");

  const auto v6 = parse_target("http://[::1]:9000/");
  REQUIRE(v6.address.ss_family == AF_INET6);
  REQUIRE(v6.port == 9000);
  REQUIRE(v6.host_header == "[::1]:9000");

  REQUIRE(parse_target("http://127.255.3.4:1/").port == 1);
}

TEST_CASE("loadgen: a target that is not this machine's loopback is refused", "[loadgen][ch01]") {
  for (const std::string url :
       {"http://10.0.0.1/", "http://example.com/", "http://128.0.0.1:80/", "http://[::2]/", "http://[::ffff:8.8.8.8]/",
        "http://127.1/", "http://0x7f.0.0.1/", "http://0.0.0.0/", "http://192.168.1.1:8080/"}) {
    INFO(url);
    try {
      parse_target(url);
      FAIL("accepted " << url);
    } catch (const std::invalid_argument& e) {
      REQUIRE(std::string(e.what()).find("loopback") != std::string::npos);
    }
  }
  for (const std::string url :
       {"https://127.0.0.1/", "127.0.0.1:80/", "http://user@127.0.0.1/", "http://127.0.0.1:0/",
        "http://127.0.0.1:70000/", "http://127.0.0.1:/", "http://127.0.0.1:8x/", "http:///path", "http://[::1/"}) {
    INFO(url);
    REQUIRE_THROWS_AS(parse_target(url), std::invalid_argument);
  }
}
