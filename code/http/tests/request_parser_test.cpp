// http/request_parser tests: framing, limits and semantics of the request parser (chapter 01).
// Changed in chapter 06: one parsed request held at a time.
// Role: pin every status the parser can answer with, at the byte where it must answer,
// and show that how the bytes are split across feed() calls never changes the result.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_parser.h"

namespace {

using handoff::http::Limits;
using handoff::http::Request;
using handoff::http::RequestParser;

/// One line per request with everything the parser decides, so that two parses can be
/// compared as a whole and a mismatch prints readably.
std::string describe(const Request& r) {
  std::string s = r.method + " " + r.target + " HTTP/1." + std::to_string(r.version_minor);
  s += r.keep_alive ? " keep-alive" : " close";
  for (const auto& h : r.headers) s += " [" + h.name + ": " + h.value + "]";
  s += " body{" + r.body + "}";
  return s;
}

std::vector<std::string> drain(RequestParser& p) {
  std::vector<std::string> out;
  while (!p.ready().empty()) {
    out.push_back(describe(p.ready().front()));
    p.ready().pop_front();
  }
  return out;
}

std::vector<std::string> parse_whole(std::string_view wire, Limits limits = {}) {
  RequestParser p(limits);
  p.feed(wire);
  return drain(p);
}

const std::string kPipeline =
    "GET /index.html?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"
    "POST /submit HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world"
    "POST /chunks HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n";

const std::vector<std::string> kPipelineParsed = {
    "GET /index.html?x=1 HTTP/1.1 keep-alive [Host: a] body{}",
    "POST /submit HTTP/1.1 keep-alive [Host: a] [Content-Length: 11] body{hello world}",
    "POST /chunks HTTP/1.1 keep-alive [Host: a] [Transfer-Encoding: chunked] body{hello world}",
};

/// The offsets just past each request of kPipeline.
std::vector<std::size_t> pipeline_ends() {
  const std::size_t first = kPipeline.find("POST");
  const std::size_t second = kPipeline.find("POST", first + 1);
  return {first, second, kPipeline.size()};
}

std::string head_with_field_value(std::size_t value_len) {
  return "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(value_len, 'v') + "\r\n\r\n";
}

}  // namespace

TEST_CASE("request parser: three pipelined requests in one feed parse in order", "[http][ch01]") {
  RequestParser p;
  p.feed(kPipeline);
  CHECK(drain(p) == kPipelineParsed);
  CHECK(p.error_status() == 0);
  CHECK_FALSE(p.stopped());
  CHECK_FALSE(p.request_in_progress());
}

TEST_CASE("request parser: every byte-boundary split of three pipelined requests parses the same", "[http][ch01]") {
  for (std::size_t cut = 0; cut <= kPipeline.size(); ++cut) {
    INFO("cut at " << cut);
    RequestParser p;
    p.feed(std::string_view(kPipeline).substr(0, cut));
    p.feed(std::string_view(kPipeline).substr(cut));
    REQUIRE(drain(p) == kPipelineParsed);
    REQUIRE(p.error_status() == 0);
  }
}

TEST_CASE("request parser: every two-cut split of three pipelined requests parses the same", "[http][ch01]") {
  const std::string_view wire = kPipeline;
  for (std::size_t a = 1; a < wire.size(); ++a) {
    for (std::size_t b = a; b < wire.size(); ++b) {
      RequestParser p;
      p.feed(wire.substr(0, a));
      p.feed(wire.substr(a, b - a));
      p.feed(wire.substr(b));
      if (drain(p) != kPipelineParsed || p.error_status() != 0) {
        FAIL("cuts at " << a << " and " << b << " parse differently");
      }
    }
  }
  SUCCEED("all two-cut splits agree");
}

TEST_CASE("request parser: one byte at a time, each request is ready exactly at its last byte", "[http][ch01]") {
  const std::vector<std::size_t> ends = pipeline_ends();
  RequestParser p;
  std::vector<std::string> got;
  std::size_t expected_ready = 0;
  for (std::size_t i = 0; i < kPipeline.size(); ++i) {
    p.feed(std::string_view(kPipeline).substr(i, 1));
    if (expected_ready < ends.size() && i + 1 == ends[expected_ready]) ++expected_ready;
    INFO("after byte " << i);
    REQUIRE(got.size() + p.ready().size() == expected_ready);
    for (auto& s : drain(p)) got.push_back(s);
  }
  CHECK(got == kPipelineParsed);
  CHECK(p.error_status() == 0);
}

TEST_CASE("request parser: feed_some takes one request at a time and returns the bytes it took", "[http][ch06]") {
  // Chapter 06: a connection holds one parsed request, not every request a read brought.
  const std::vector<std::size_t> ends = pipeline_ends();
  RequestParser p;
  std::vector<std::string> got;
  std::string_view rest = kPipeline;
  std::size_t fed = 0;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const std::size_t taken = p.feed_some(rest, 1);
    fed += taken;
    INFO("request " << i);
    REQUIRE(fed == ends[i]);  // stopped exactly at the request's last byte
    REQUIRE(p.ready().size() == 1);
    CHECK(p.feed_some(rest.substr(taken), 1) == 0);  // holding one, it takes nothing more
    rest.remove_prefix(taken);
    for (auto& r : drain(p)) got.push_back(r);
  }
  CHECK(rest.empty());
  CHECK(got == kPipelineParsed);
  CHECK(p.error_status() == 0);
}

TEST_CASE("request parser: request accessors give path, query parameters and headers", "[http][ch01]") {
  RequestParser p;
  p.feed("GET /sleep?ms=10&flag&x=a%20b HTTP/1.1\r\nHost: example\r\nX-Mixed-Case: Yes  \r\n\r\n");
  REQUIRE(p.ready().size() == 1);
  const Request& r = p.ready().front();
  CHECK(r.path() == "/sleep");
  CHECK(r.query("ms") == "10");
  CHECK(r.query("x") == "a%20b");
  CHECK(r.query("flag").empty());
  CHECK(r.query("absent").empty());
  CHECK(r.query("m").empty());
  REQUIRE(r.header("x-mixed-case") != nullptr);
  CHECK(*r.header("x-mixed-case") == "Yes");   // trailing whitespace trimmed
  CHECK(r.headers[1].name == "X-Mixed-Case");  // name kept as sent
  REQUIRE(r.header("HOST") != nullptr);
  CHECK(*r.header("HOST") == "example");
  CHECK(r.header("Content-Length") == nullptr);
  CHECK_FALSE(r.is_head());
}

TEST_CASE("request parser: a target without a query has the whole target as its path", "[http][ch01]") {
  RequestParser p;
  p.feed("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(p.ready().size() == 1);
  CHECK(p.ready().front().path() == "/plain");
  CHECK(p.ready().front().query("plain").empty());
}

TEST_CASE("request parser: HEAD parses as a bodiless request and the next one follows", "[http][ch01]") {
  RequestParser p;
  p.feed("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /g HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(p.ready().size() == 2);
  CHECK(p.ready()[0].is_head());
  CHECK(p.ready()[0].body.empty());
  CHECK(p.ready()[1].target == "/g");
}

TEST_CASE("request parser: chunked bodies are de-chunked across extensions and trailers", "[http][ch01]") {
  RequestParser p;
  p.feed(
      "POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "3;name=\"quoted value\"\r\nabc\r\n"
      "A;bare\r\n0123456789\r\n"
      "0\r\nX-Checksum: 42\r\nX-Other: 1\r\n\r\n");
  REQUIRE(p.error_status() == 0);
  REQUIRE(p.ready().size() == 1);
  const Request& r = p.ready().front();
  CHECK(r.body == "abc0123456789");
  CHECK(r.header("X-Checksum") == nullptr);  // trailers are not head fields
  CHECK(r.headers.size() == 2);              // Host and Transfer-Encoding
}

TEST_CASE("request parser: Expect 100-continue is reported once while the body is awaited", "[http][ch01]") {
  RequestParser p;
  p.feed("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 5\r\n\r\n");
  CHECK(p.take_expect_continue());
  CHECK_FALSE(p.take_expect_continue());
  p.feed("hello");
  REQUIRE(p.ready().size() == 1);
  CHECK(p.ready().front().body == "hello");
  CHECK_FALSE(p.take_expect_continue());
}

TEST_CASE("request parser: Expect 100-continue on a chunked body is reported", "[http][ch01]") {
  RequestParser p;
  p.feed("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n");
  CHECK(p.take_expect_continue());
}

TEST_CASE("request parser: Expect 100-continue is not reported when no body is awaited", "[http][ch01]") {
  SECTION("the body came with the head") {
    RequestParser p;
    p.feed("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhe");
    CHECK_FALSE(p.take_expect_continue());
  }
  SECTION("there is no body") {
    RequestParser p;
    p.feed("GET /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n");
    CHECK_FALSE(p.take_expect_continue());
    CHECK(p.ready().size() == 1);
  }
  SECTION("the head did not ask") {
    RequestParser p;
    p.feed("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n");
    CHECK_FALSE(p.take_expect_continue());
  }
}

TEST_CASE("request parser: HTTP/1.0 without keep-alive closes and stops parsing", "[http][ch01]") {
  RequestParser p;
  p.feed("GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.0\r\n\r\n");
  REQUIRE(p.ready().size() == 1);
  CHECK(p.ready().front().version_minor == 0);
  CHECK_FALSE(p.ready().front().keep_alive);
  CHECK(p.stopped());
  CHECK(p.error_status() == 0);
}

TEST_CASE("request parser: HTTP/1.0 with Connection keep-alive keeps the connection", "[http][ch01]") {
  RequestParser p;
  p.feed("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\n\r\n");
  REQUIRE(p.ready().size() == 2);
  CHECK(p.ready()[0].version_minor == 0);
  CHECK(p.ready()[0].keep_alive);
  CHECK_FALSE(p.ready()[1].keep_alive);
}

TEST_CASE("request parser: Connection close stops parsing and later bytes are ignored", "[http][ch01]") {
  RequestParser p;
  p.feed("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(p.ready().size() == 1);
  CHECK_FALSE(p.ready().front().keep_alive);
  CHECK(p.stopped());
  p.feed("GET /c HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(p.ready().size() == 1);
  CHECK(p.error_status() == 0);
  CHECK_FALSE(p.request_in_progress());
}

TEST_CASE("request parser: an upgrade request is served as a last ordinary request", "[http][ch01]") {
  RequestParser p;
  p.feed(
      "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
      "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  REQUIRE(p.ready().size() == 1);
  CHECK(p.ready().front().target == "/ws");
  CHECK_FALSE(p.ready().front().keep_alive);
  CHECK(p.stopped());
  CHECK(p.error_status() == 0);
}

TEST_CASE("request parser: head_in_progress and request_in_progress follow the bytes", "[http][ch01]") {
  RequestParser p;
  CHECK_FALSE(p.head_in_progress());
  CHECK_FALSE(p.request_in_progress());
  p.feed("P");
  CHECK(p.head_in_progress());
  CHECK(p.request_in_progress());
  p.feed("OST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n");
  CHECK(p.head_in_progress());
  p.feed("\r\n");
  CHECK_FALSE(p.head_in_progress());
  CHECK(p.request_in_progress());
  p.feed("ab");
  CHECK(p.request_in_progress());
  p.feed("c");
  CHECK_FALSE(p.head_in_progress());
  CHECK_FALSE(p.request_in_progress());
  CHECK(p.ready().size() == 1);
  p.feed("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK_FALSE(p.request_in_progress());
  CHECK(p.ready().size() == 2);
}

TEST_CASE("request parser: a request line of exactly max_request_line is accepted", "[http][ch01]") {
  Limits limits;
  limits.max_request_line = 40;
  // "GET " + target + " HTTP/1.1" is 13 bytes around the target.
  const std::string line = "GET /" + std::string(40 - 14, 'a') + " HTTP/1.1";
  REQUIRE(line.size() == 40);
  const std::string wire = line + "\r\nHost: x\r\n\r\n";
  RequestParser p(limits);
  for (char c : wire) p.feed(std::string_view(&c, 1));  // no end-of-feed false alarm
  CHECK(p.error_status() == 0);
  CHECK(p.ready().size() == 1);
}

TEST_CASE("request parser: a request line one byte over max_request_line is 414", "[http][ch01]") {
  Limits limits;
  limits.max_request_line = 40;
  RequestParser p(limits);
  p.feed("GET /" + std::string(40 - 13, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(p.error_status() == 414);
  CHECK(p.ready().empty());
  CHECK(p.stopped());
}

TEST_CASE("request parser: an over-long target is 414 before the request line ends", "[http][ch01]") {
  Limits limits;
  limits.max_request_line = 40;
  RequestParser p(limits);
  p.feed("GET /" + std::string(20, 'a'));
  CHECK(p.error_status() == 0);
  p.feed(std::string(20, 'a'));
  CHECK(p.error_status() == 414);
  CHECK_FALSE(p.error_reason().empty());
}

TEST_CASE("request parser: a header section of exactly max_header_bytes is accepted", "[http][ch01]") {
  Limits limits;
  limits.max_header_bytes = 64;
  // The section "Host: x\r\nX: <value>\r\n\r\n" is 16 bytes around the value.
  const std::string wire = head_with_field_value(64 - 16);
  RequestParser p(limits);
  for (char c : wire) p.feed(std::string_view(&c, 1));
  CHECK(p.error_status() == 0);
  CHECK(p.ready().size() == 1);
  CHECK(parse_whole(wire, limits).size() == 1);
}

TEST_CASE("request parser: a header section one byte over max_header_bytes is 431", "[http][ch01]") {
  Limits limits;
  limits.max_header_bytes = 64;
  RequestParser p(limits);
  p.feed(head_with_field_value(64 - 15));
  CHECK(p.error_status() == 431);
  CHECK(p.ready().empty());
}

TEST_CASE("request parser: header bytes no field covers still count toward 431", "[http][ch01]") {
  Limits limits;
  limits.max_header_bytes = 64;
  RequestParser p(limits);
  p.feed("GET / HTTP/1.1\r\nHost: x\r\nX:");
  p.feed(std::string(40, ' '));  // whitespace llhttp discards before a value
  CHECK(p.error_status() == 0);
  p.feed(std::string(40, ' '));
  CHECK(p.error_status() == 431);
}

TEST_CASE("request parser: max_header_fields fields are accepted, one more is 431", "[http][ch01]") {
  Limits limits;
  limits.max_header_fields = 3;
  const std::string three = "GET / HTTP/1.1\r\nHost: x\r\nB: 2\r\nC: 3\r\n";
  CHECK(parse_whole(three + "\r\n", limits).size() == 1);
  RequestParser p(limits);
  p.feed(three + "D: 4\r\n");  // refused before the head ends
  CHECK(p.error_status() == 431);
}

TEST_CASE("request parser: a Content-Length of exactly max_body_bytes is accepted", "[http][ch01]") {
  Limits limits;
  limits.max_body_bytes = 10;
  const auto got = parse_whole("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123456789", limits);
  REQUIRE(got.size() == 1);
  CHECK(got[0].find("body{0123456789}") != std::string::npos);
}

TEST_CASE("request parser: a Content-Length over max_body_bytes is 413 before the body", "[http][ch01]") {
  Limits limits;
  limits.max_body_bytes = 10;
  RequestParser p(limits);
  p.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n");
  CHECK(p.error_status() == 413);
  CHECK(p.stopped());
}

TEST_CASE("request parser: a chunked body of exactly max_body_bytes is accepted", "[http][ch01]") {
  Limits limits;
  limits.max_body_bytes = 10;
  const auto got = parse_whole(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n6\r\nefghij\r\n0\r\n\r\n", limits);
  REQUIRE(got.size() == 1);
  CHECK(got[0].find("body{abcdefghij}") != std::string::npos);
}

TEST_CASE("request parser: a chunked body one byte over max_body_bytes is 413 at its chunk", "[http][ch01]") {
  Limits limits;
  limits.max_body_bytes = 10;
  RequestParser p(limits);
  p.feed("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n");
  CHECK(p.error_status() == 0);
  p.feed("7\r\n");  // the size alone says the decoded body would reach 11 bytes
  CHECK(p.error_status() == 413);
}

TEST_CASE("request parser: chunk extensions count against max_body_bytes", "[http][ch01]") {
  Limits limits;
  limits.max_body_bytes = 10;
  RequestParser p(limits);
  p.feed("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" + std::string(20, 'e'));
  CHECK(p.error_status() == 413);
}

TEST_CASE("request parser: a trailer section of exactly max_header_bytes is accepted, one more is 431",
          "[http][ch01]") {
  Limits limits;
  limits.max_header_bytes = 64;
  const std::string head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n";
  // The trailer section "T: <value>\r\n\r\n" is 7 bytes around the value.
  CHECK(parse_whole(head + "T: " + std::string(64 - 7, 't') + "\r\n\r\n", limits).size() == 1);
  RequestParser p(limits);
  p.feed(head + "T: " + std::string(64 - 6, 't') + "\r\n\r\n");
  CHECK(p.error_status() == 431);
  CHECK(p.ready().empty());
}

TEST_CASE("request parser: too many trailer fields is 431", "[http][ch01]") {
  Limits limits;
  limits.max_header_fields = 2;
  const std::string head = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n";
  CHECK(parse_whole(head + "T1: 1\r\nT2: 2\r\n\r\n", limits).size() == 1);
  RequestParser p(limits);
  p.feed(head + "T1: 1\r\nT2: 2\r\nT3: 3\r\n\r\n");
  CHECK(p.error_status() == 431);
  CHECK(p.ready().empty());
}

TEST_CASE("request parser: Content-Length together with Transfer-Encoding is 400", "[http][ch01]") {
  const char* heads[] = {
      "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
      "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
      "Content-Length: 5\r\nTransfer-Encoding: chunked, gzip\r\n",
  };
  for (const char* h : heads) {
    INFO(h);
    RequestParser p;
    p.feed(std::string("POST / HTTP/1.1\r\nHost: x\r\n") + h + "\r\n0\r\n\r\n");
    CHECK(p.error_status() == 400);
  }
}

TEST_CASE("request parser: two differing Content-Lengths are 400", "[http][ch01]") {
  RequestParser p;
  p.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!");
  CHECK(p.error_status() == 400);
  CHECK(p.ready().empty());
}

TEST_CASE("request parser: what llhttp rejects is 400", "[http][ch01]") {
  const char* bad[] = {
      "GET / HTTP/1.1\r\nHost: x\r\nBad Name: x\r\n\r\n",  // space in a field name
      "GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n",      // bare CR in a value
      "GET / HTTP/1.1 \r\n\r\n",                           // space after the version
      "GET /\r\n\r\n",                                     // HTTP/0.9
      "G@T / HTTP/1.1\r\nHost: x\r\n\r\n",                 // not a method
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
  };
  for (const char* wire : bad) {
    INFO(wire);
    RequestParser p;
    p.feed(wire);
    CHECK(p.error_status() == 400);
    CHECK_FALSE(p.error_reason().empty());
    CHECK(p.ready().empty());
  }
}

TEST_CASE("request parser: after an error later feeds are ignored and the error stays", "[http][ch01]") {
  RequestParser p;
  p.feed("GET /ok HTTP/1.1\r\nHost: x\r\n\r\nBROKEN\r\n\r\n");
  REQUIRE(p.error_status() == 400);
  CHECK(p.stopped());
  REQUIRE(p.ready().size() == 1);  // the request before the error is still served
  CHECK(p.ready().front().target == "/ok");
  const std::string reason(p.error_reason());
  p.feed("GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(p.ready().size() == 1);
  CHECK(p.error_status() == 400);
  CHECK(p.error_reason() == reason);
  CHECK_FALSE(p.take_expect_continue());
}
