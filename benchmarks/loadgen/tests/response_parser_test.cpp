// loadgen/tests/response_parser_test: strictness and framing of the response parser (chapter 01).
// Role: show that every framing (Content-Length, chunked, until-close, pipelined, split
// anywhere) yields exactly one status per response, and that malformed or truncated
// bytes are an error at once, never a wait for more.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "loadgen/response_parser.h"

using handoff::loadgen::ResponseParser;
using Outcome = ResponseParser::Outcome;

namespace {

struct Collector {
  std::vector<int> statuses;
  bool accept = true;
  static bool sink(void* self, int status) {
    auto* c = static_cast<Collector*>(self);
    c->statuses.push_back(status);
    return c->accept;
  }
};

Outcome feed(ResponseParser& p, std::string_view bytes) { return p.feed(bytes.data(), bytes.size()); }

// Feed one byte at a time; return the first outcome that is not ok (or ok at the end).
Outcome feed_bytewise(ResponseParser& p, std::string_view bytes) {
  for (const char c : bytes) {
    const Outcome o = p.feed(&c, 1);
    if (o != Outcome::ok) return o;
  }
  return Outcome::ok;
}

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
constexpr std::string_view kChunked =
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n";

}  // namespace

TEST_CASE("loadgen: the response parser reports one status per Content-Length response", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  REQUIRE(feed(p, kOk) == Outcome::ok);
  REQUIRE(c.statuses == std::vector<int>{200});
  REQUIRE(p.idle());
}

TEST_CASE("loadgen: the response parser separates pipelined responses in one buffer", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  const std::string both =
      std::string(kOk) + "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n" + std::string(kChunked);
  REQUIRE(feed(p, both) == Outcome::ok);
  REQUIRE(c.statuses == std::vector<int>{200, 404, 200});
}

TEST_CASE("loadgen: the response parser completes a chunked response split at every byte", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  const std::string_view all = kChunked;
  for (std::size_t i = 0; i + 1 < all.size(); ++i) {
    REQUIRE(p.feed(all.data() + i, 1) == Outcome::ok);
    REQUIRE(c.statuses.empty());  // nothing is reported before the last byte
  }
  REQUIRE(p.feed(all.data() + all.size() - 1, 1) == Outcome::ok);
  REQUIRE(c.statuses == std::vector<int>{200});
  REQUIRE(feed_bytewise(p, kChunked) == Outcome::ok);
  REQUIRE(c.statuses == std::vector<int>{200, 200});
}

TEST_CASE("loadgen: the response parser skips interim 1xx responses", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  REQUIRE(feed(p, "HTTP/1.1 100 Continue\r\n\r\n" + std::string(kOk)) == Outcome::ok);
  REQUIRE(c.statuses == std::vector<int>{200});
}

TEST_CASE("loadgen: the response parser stops after a response that closes the connection", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  const std::string bytes = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok" + std::string(kOk);
  REQUIRE(feed(p, bytes) == Outcome::closed);
  REQUIRE(c.statuses == std::vector<int>{200});  // the bytes after it are not read
  REQUIRE(feed(p, kOk) == Outcome::closed);

  Collector d;
  ResponseParser http10(&Collector::sink, &d);
  REQUIRE(feed(http10, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok") == Outcome::closed);
  REQUIRE(d.statuses == std::vector<int>{200});
}

TEST_CASE("loadgen: the response parser completes a body that runs to the end of the connection", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  REQUIRE(feed(p, "HTTP/1.1 200 OK\r\n\r\nsome bytes") == Outcome::ok);
  REQUIRE(c.statuses.empty());
  REQUIRE(!p.idle());
  REQUIRE(p.finish() == Outcome::closed);
  REQUIRE(c.statuses == std::vector<int>{200});
}

TEST_CASE("loadgen: the response parser treats a response cut short by EOF as an error", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c);
  REQUIRE(feed(p, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") == Outcome::ok);
  REQUIRE(p.finish() == Outcome::error);
  REQUIRE(c.statuses.empty());

  Collector d;
  ResponseParser idle(&Collector::sink, &d);
  REQUIRE(feed(idle, kOk) == Outcome::ok);
  REQUIRE(idle.finish() == Outcome::ok);  // EOF between responses is no error
}

TEST_CASE("loadgen: the response parser rejects malformed responses at once", "[loadgen][ch01]") {
  const std::vector<std::string> bad = {
      "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",                        // status not a number
      "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",                      // length not a number
      "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",  // two lengths
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",         // chunk size
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n",   // no CRLF after data
      "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",                            // header without ':'
      "HTTP/1.1 200 OK\nContent-Length: 0\n\n",                              // bare LF (strict mode)
      "hello world\r\n\r\n",                                                 // not HTTP at all
      "HTTP/9.9 200 OK\r\nContent-Length: 0\r\n\r\n",                        // unknown version
  };
  for (const auto& bytes : bad) {
    INFO(bytes);
    Collector c;
    ResponseParser whole(&Collector::sink, &c);
    REQUIRE(feed(whole, bytes) == Outcome::error);
    REQUIRE(c.statuses.empty());
    REQUIRE(feed(whole, kOk) == Outcome::error);  // an error is final
    REQUIRE(whole.error_reason() != nullptr);

    Collector d;
    ResponseParser split(&Collector::sink, &d);
    REQUIRE(feed_bytewise(split, bytes) == Outcome::error);
  }
}

TEST_CASE("loadgen: the response parser fails a response the sink rejects", "[loadgen][ch01]") {
  Collector c;
  c.accept = false;
  ResponseParser p(&Collector::sink, &c);
  REQUIRE(feed(p, kOk) == Outcome::error);
  REQUIRE(c.statuses == std::vector<int>{200});
  p.reset();  // a fresh connection starts clean
  c.accept = true;
  REQUIRE(feed(p, kOk) == Outcome::ok);
}

TEST_CASE("loadgen: the response parser takes HEAD responses as bodiless", "[loadgen][ch01]") {
  Collector c;
  ResponseParser p(&Collector::sink, &c, /*head_requests=*/true);
  REQUIRE(feed(p, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n") ==
          Outcome::ok);
  REQUIRE(c.statuses == std::vector<int>{200, 200});
}
