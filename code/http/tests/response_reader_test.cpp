// http/response_reader tests: where each response ends, what is kept, and strictness (chapter 01).
// Role: pin what the three readers of responses (the test kit's client, the load generator,
// the connection fuzzer's oracle) rely on: the reader stops at each response's end, to the
// byte, however the bytes are split; keeps headers and bodies only when asked; frames a
// response as bodiless only when told; and fails at the first byte that is not a response.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "http/response_reader.h"

namespace {

using handoff::http::ResponseReader;
using Step = ResponseReader::Step;

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello";
constexpr std::string_view kChunked =
    "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";

/// Each response read from `bytes` fed `piece` bytes at a time: status, body, and the
/// offset where it ended.
std::vector<std::string> read_all(ResponseReader& reader, std::string_view bytes, std::size_t piece) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::string_view chunk = bytes.substr(at, piece);
    for (;;) {
      std::size_t used = 0;
      const Step step = reader.feed(chunk, used);
      REQUIRE(step != Step::error);
      at += used;
      chunk.remove_prefix(used);
      if (step == Step::more) break;
      out.push_back(std::to_string(reader.response().status) + " " + reader.response().body + " @" +
                    std::to_string(at));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("response reader: it stops at the end of each pipelined response, however the bytes are split",
          "[http][ch01]") {
  const std::string both = std::string(kOk) + std::string(kChunked);
  const std::vector<std::string> expected = {"200 hello @" + std::to_string(kOk.size()),
                                             "201 hello world @" + std::to_string(both.size())};
  for (std::size_t piece : {both.size(), std::size_t{7}, std::size_t{1}}) {
    ResponseReader reader({.keep_headers = false, .keep_body = true});
    REQUIRE(read_all(reader, both, piece) == expected);
    REQUIRE(reader.idle());
  }
}

TEST_CASE("response reader: headers and bodies are kept only when asked", "[http][ch01]") {
  std::size_t used = 0;
  ResponseReader keeps({.keep_headers = true, .keep_body = true});
  REQUIRE(keeps.feed(kOk, used) == Step::response);
  REQUIRE(keeps.response().headers.size() == 2);
  REQUIRE(keeps.response().header("x-a") != nullptr);
  REQUIRE(*keeps.response().header("x-a") == "1");
  REQUIRE(keeps.response().body == "hello");

  ResponseReader bare;
  REQUIRE(bare.feed(kOk, used) == Step::response);
  REQUIRE(used == kOk.size());
  REQUIRE(bare.response().status == 200);
  REQUIRE(bare.response().headers.empty());
  REQUIRE(bare.response().body.empty());
}

TEST_CASE("response reader: an answer to HEAD is read without its body only when the caller says so", "[http][ch01]") {
  const std::string head_then_next = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
  ResponseReader head({.bodiless = [](const void*, int status) { return status == 200; }});
  std::size_t used = 0;
  REQUIRE(head.feed(head_then_next, used) == Step::response);
  REQUIRE(used == head_then_next.find("HTTP/1.1 204"));
  std::size_t rest = 0;
  REQUIRE(head.feed(std::string_view(head_then_next).substr(used), rest) == Step::response);
  REQUIRE(head.response().status == 204);

  // Not told: the next response's first five bytes are taken as the body.
  ResponseReader plain;
  REQUIRE(plain.feed(head_then_next, used) == Step::response);
  REQUIRE(used == head_then_next.find("HTTP/1.1 204") + 5);
}

TEST_CASE("response reader: a body that runs to the close completes at finish(), and one cut short is an error",
          "[http][ch01]") {
  std::size_t used = 0;
  ResponseReader until_close({.keep_body = true});
  REQUIRE(until_close.feed("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc", used) == Step::more);
  REQUIRE(until_close.finish() == Step::response);
  REQUIRE(until_close.response().body == "abc");
  REQUIRE_FALSE(until_close.response().keep_alive);

  ResponseReader cut;
  REQUIRE(cut.feed(kOk.substr(0, kOk.size() - 1), used) == Step::more);
  REQUIRE(cut.finish() == Step::error);

  ResponseReader between;
  REQUIRE(between.feed(kOk, used) == Step::response);
  REQUIRE(between.finish() == Step::more);
}

TEST_CASE("response reader: the first byte that cannot be a response is an error, and so is any after a close",
          "[http][ch01]") {
  std::size_t used = 0;
  ResponseReader bad;
  REQUIRE(bad.feed("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", used) == Step::error);
  REQUIRE(std::string_view(bad.error_reason()).size() > 0);

  const std::string closed = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
  ResponseReader after_close;
  REQUIRE(after_close.feed(closed + std::string(kOk), used) == Step::response);
  REQUIRE(used == closed.size());
  REQUIRE(after_close.feed(kOk, used) == Step::error);
}
