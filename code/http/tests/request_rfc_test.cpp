// http/request_parser RFC tests: the server MUSTs of RFC 9112/9110 the parser keeps (chapter 01).
// Role: one test per requirement that llhttp alone does not enforce (Host, the request-target
// forms, transfer codings by version and order, chunk extensions, field names, versions,
// methods, Expect), each stated with its section, so that a regression names the rule.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "http/request_parser.h"

namespace {

using handoff::http::Request;
using handoff::http::RequestParser;

/// Parses `wire` in one feed and, separately, one byte at a time; both must agree on the
/// status (0 when the request was accepted). Returns that status.
int status_of(std::string_view wire) {
  RequestParser whole;
  whole.feed(wire);
  RequestParser bytes;
  for (char c : wire) bytes.feed(std::string_view(&c, 1));
  INFO(wire);
  CHECK(whole.error_status() == bytes.error_status());
  CHECK(whole.ready().size() == bytes.ready().size());
  if (whole.error_status() == 0) CHECK(whole.ready().size() == 1);
  return whole.error_status();
}

/// The one request `wire` holds, which must parse without error.
Request only_request(std::string_view wire) {
  RequestParser p;
  p.feed(wire);
  INFO(wire << " -> " << p.error_status() << " " << p.error_reason());
  REQUIRE(p.error_status() == 0);
  REQUIRE(p.ready().size() == 1);
  return std::move(p.ready().front());
}

const std::string kChunkedHead = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";

}  // namespace

TEST_CASE("request parser: an HTTP/1.1 request without Host is 400 (RFC 9112 3.2)", "[http][ch01]") {
  CHECK(status_of("GET / HTTP/1.1\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHostname: x\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\n\r\n") == 0);
}

TEST_CASE("request parser: an HTTP/1.0 request without Host is accepted", "[http][ch01]") {
  CHECK(status_of("GET / HTTP/1.0\r\n\r\n") == 0);
}

TEST_CASE("request parser: two Host fields are 400 in any version (RFC 9112 3.2)", "[http][ch01]") {
  CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n") == 400);
}

TEST_CASE("request parser: a Host that is not a uri-host and optional port is 400 (RFC 9112 3.2)", "[http][ch01]") {
  for (const char* host : {"a b", "x:8o", "x/y", "u@x", "[::1", "x:80:80", "[]"}) {
    INFO(host);
    CHECK(status_of(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n") == 400);
  }
  for (const char* host :
       {"", "x", "x:", "x:8080", "127.0.0.1:1", "[::1]:8080", "[v1.fe]", "a-b.example_%41~!$&'()*+;="}) {
    INFO(host);
    CHECK(status_of(std::string("GET / HTTP/1.1\r\nHost: ") + host + "\r\n\r\n") == 0);
  }
}

TEST_CASE("request parser: an absolute-form target is accepted and its authority replaces Host (RFC 9112 3.2.2)",
          "[http][ch01]") {
  const Request r = only_request("GET http://a.example:8080/json?x=1 HTTP/1.1\r\nHost: b.example\r\n\r\n");
  CHECK(r.target == "http://a.example:8080/json?x=1");  // as sent
  CHECK(r.path() == "/json");
  CHECK(r.query("x") == "1");
  REQUIRE(r.header("host") != nullptr);
  CHECK(*r.header("host") == "a.example:8080");
  CHECK(r.headers.size() == 1);
}

TEST_CASE("request parser: an absolute-form target without a path has the path /", "[http][ch01]") {
  CHECK(only_request("GET HTTPS://a.example HTTP/1.1\r\nHost: a.example\r\n\r\n").path() == "/");
  CHECK(only_request("GET http://a.example?q=1 HTTP/1.1\r\nHost: a.example\r\n\r\n").path() == "/");
}

TEST_CASE("request parser: an HTTP/1.0 absolute-form request gains Host from its target", "[http][ch01]") {
  const Request r = only_request("GET http://a.example/ HTTP/1.0\r\n\r\n");
  REQUIRE(r.header("host") != nullptr);
  CHECK(*r.header("host") == "a.example");
}

TEST_CASE("request parser: an absolute-form target whose authority is not a valid host is 400", "[http][ch01]") {
  CHECK(status_of("GET http://u@a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n") == 400);
}

TEST_CASE("request parser: the asterisk form is for OPTIONS only (RFC 9112 3.2.4)", "[http][ch01]") {
  CHECK(status_of("GET * HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(only_request("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n").path() == "*");
}

TEST_CASE("request parser: CONNECT takes the authority form only (RFC 9112 3.2.3)", "[http][ch01]") {
  CHECK(status_of("CONNECT / HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("CONNECT * HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(only_request("CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n").target == "x:443");
}

TEST_CASE("request parser: Transfer-Encoding on HTTP/1.0 is faulty framing, 400 (RFC 9112 6.1)", "[http][ch01]") {
  RequestParser p;
  p.feed("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  CHECK(p.error_status() == 400);
  CHECK(p.ready().empty());
  CHECK(p.stopped());
  CHECK(status_of("POST / HTTP/1.0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello") == 400);
}

TEST_CASE("request parser: a Transfer-Encoding whose final coding is not chunked is 400 (RFC 9112 6.3)",
          "[http][ch01]") {
  for (const char* te : {"gzip", "identity", "chunked, gzip", "chunked\r\nTransfer-Encoding: gzip"}) {
    INFO(te);
    CHECK(status_of(std::string("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ") + te + "\r\n\r\n0\r\n\r\n") ==
          400);
  }
}

TEST_CASE("request parser: an unknown coding before a final chunked is 501 (RFC 9112 6.1)", "[http][ch01]") {
  for (const char* te : {"gzip, chunked", "gzip\r\nTransfer-Encoding: chunked"}) {
    INFO(te);
    CHECK(status_of(std::string("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ") + te + "\r\n\r\n0\r\n\r\n") ==
          501);
  }
}

TEST_CASE("request parser: chunk extensions in any order and form are ignored (RFC 9112 7.1.1)", "[http][ch01]") {
  for (const char* ext : {";foo=bar;baz", ";a=b;c=d", ";baz;foo=bar", ";foo=\"bar\";baz", ";a=\"x;y\";b=c;d", ";a=;b",
                          ";a=1;b=2;c=3;d=4"}) {
    INFO(ext);
    const Request r = only_request(kChunkedHead + "4" + ext + "\r\nabcd\r\n0" + ext + "\r\n\r\n");
    CHECK(r.body == "abcd");
  }
}

TEST_CASE("request parser: chunk extensions split at every byte parse the same", "[http][ch01]") {
  const std::string wire = kChunkedHead + "4;foo=bar;baz\r\nabcd\r\n3;a=1;b\r\nefg\r\n0\r\n\r\n";
  for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
    INFO("cut at " << cut);
    RequestParser p;
    p.feed(std::string_view(wire).substr(0, cut));
    p.feed(std::string_view(wire).substr(cut));
    REQUIRE(p.error_status() == 0);
    REQUIRE(p.ready().size() == 1);
    CHECK(p.ready().front().body == "abcdefg");
  }
}

TEST_CASE("request parser: a chunk extension that is not a token is 400", "[http][ch01]") {
  CHECK(status_of(kChunkedHead + "4;foo=bar;;\r\nabcd\r\n0\r\n\r\n") == 400);
  CHECK(status_of(kChunkedHead + "4;foo=bar;@\r\nabcd\r\n0\r\n\r\n") == 400);
}

TEST_CASE("request parser: an empty field name is 400 (RFC 9110 5.1)", "[http][ch01]") {
  CHECK(status_of("GET / HTTP/1.1\r\nHost: x\r\n: x\r\n\r\n") == 400);
  CHECK(status_of("GET / HTTP/1.1\r\n: x\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of(kChunkedHead + "0\r\n: t\r\n\r\n") == 400);  // in the trailer section too
}

TEST_CASE("request parser: a higher HTTP/1 minor version is served as HTTP/1.1 (RFC 9110 2.5)", "[http][ch01]") {
  const Request r = only_request("GET / HTTP/1.2\r\nHost: x\r\n\r\n");
  CHECK(r.version_minor == 1);
  CHECK(r.keep_alive);
}

TEST_CASE("request parser: a major version other than 1 is 505", "[http][ch01]") {
  CHECK(status_of("GET / HTTP/2.0\r\nHost: x\r\n\r\n") == 505);
  CHECK(status_of("GET / HTTP/3.1\r\nHost: x\r\n\r\n") == 505);
  CHECK(status_of("GET / HTTP/0.9\r\nHost: x\r\n\r\n") == 505);
}

TEST_CASE("request parser: an unknown method that is a token is 501, one that is not is 400 (RFC 9110 9.1)",
          "[http][ch01]") {
  CHECK(status_of("FOO / HTTP/1.1\r\nHost: x\r\n\r\n") == 501);
  CHECK(status_of("get / HTTP/1.1\r\nHost: x\r\n\r\n") == 501);
  CHECK(status_of("GE / HTTP/1.1\r\nHost: x\r\n\r\n") == 501);        // a prefix of GET
  CHECK(status_of("GETS / HTTP/1.1\r\nHost: x\r\n\r\n") == 501);      // GET and more
  CHECK(status_of("\r\nBREW / HTTP/1.1\r\nHost: x\r\n\r\n") == 501);  // after an empty line
  CHECK(status_of("G@T / HTTP/1.1\r\nHost: x\r\n\r\n") == 400);
  CHECK(status_of("FOO\r\n\r\n") == 400);
  CHECK(status_of(" / HTTP/1.1\r\n\r\n") == 400);
}

TEST_CASE("request parser: Expect 100-continue on HTTP/1.0 is ignored (RFC 9110 10.1.1)", "[http][ch01]") {
  RequestParser p;
  p.feed("POST /e HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  CHECK_FALSE(p.take_expect_continue());
}

TEST_CASE("request parser: an unknown method counts toward max_request_line, however it is split", "[http][ch01]") {
  handoff::http::Limits limits;
  limits.max_request_line = 10;
  // Empty lines count toward the request line; llhttp stops at the D (not HEAD), which is
  // the byte that takes the line over its limit.
  const std::string wire = "\r\n\r\n\r\n\r\n\r\nHD";
  RequestParser whole(limits);
  whole.feed(wire);
  CHECK(whole.error_status() == 414);
  RequestParser bytes(limits);
  for (char c : wire) bytes.feed(std::string_view(&c, 1));
  CHECK(bytes.error_status() == 414);
}
