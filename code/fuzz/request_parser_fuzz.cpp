// fuzz/request_parser_fuzz: http/request_parser under random bytes, random splits, small limits (chapter 01).
// Changed in chapter 06: one request at a time, as a connection takes them.
// Role: a libFuzzer target for the request path. Each input is parsed three times, once in
// one feed(), once cut at pseudo-random points, and once through feed_some() taking one
// request at a time as a connection does (chapter 06), and the parses must agree.
//
// The agreement checked is the parser's guarantee about splits: the same requests, in
// the same order, field for field; the same verdict on whether the stream failed and
// whether it stopped; and only statuses from the documented set. The status itself may
// legitimately differ when one stream breaks two rules (a split can reveal an oversized
// run of whitespace before llhttp reaches a bad byte), so only its presence is compared.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "http/request_parser.h"

namespace {

using handoff::http::Limits;
using handoff::http::Request;
using handoff::http::RequestParser;

bool same(const Request& a, const Request& b) {
  if (a.method != b.method || a.target != b.target || a.version_minor != b.version_minor || a.body != b.body ||
      a.keep_alive != b.keep_alive || a.headers.size() != b.headers.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.headers.size(); ++i) {
    if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value) {
      return false;
    }
  }
  return true;
}

bool documented(int status) {
  return status == 0 || status == 400 || status == 413 || status == 414 || status == 431 || status == 501 ||
         status == 505;
}

}  // namespace

// Input layout: byte 0 picks the limits (small ones reach every limit quickly), bytes 1-4
// seed the cut points, the rest is the stream.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  Limits limits;
  if ((data[0] & 1) != 0) {
    limits.max_request_line = 16 + (data[0] >> 1) % 48;
    limits.max_header_bytes = 16 + (data[0] >> 2) % 96;
    limits.max_header_fields = 1 + (data[0] >> 3) % 6;
    limits.max_body_bytes = (data[0] >> 4) % 32;
  }
  std::uint32_t seed = static_cast<std::uint32_t>(data[1]) | static_cast<std::uint32_t>(data[2]) << 8 |
                       static_cast<std::uint32_t>(data[3]) << 16 | static_cast<std::uint32_t>(data[4]) << 24;
  const std::string_view stream(reinterpret_cast<const char*>(data + 5), size - 5);

  RequestParser whole(limits);
  whole.feed(stream);

  RequestParser pieces(limits);
  std::size_t at = 0;
  while (at < stream.size()) {
    seed = seed * 1664525u + 1013904223u;  // a linear congruential step
    const std::size_t len = 1 + (seed >> 16) % 17;
    pieces.feed(stream.substr(at, len));
    at += len;
  }

  // One request at a time: feed_some() stops after each request it completes, never holds
  // two, and what it leaves is fed again once that request is taken.
  RequestParser stepwise(limits);
  std::vector<Request> taken;
  std::string_view rest = stream;
  while (!rest.empty()) {
    const std::size_t used = stepwise.feed_some(rest, 1);
    if (used > rest.size() || stepwise.ready().size() > 1) std::abort();
    if (used == 0 && stepwise.ready().empty()) std::abort();  // no progress: it would spin
    rest.remove_prefix(used);
    while (!stepwise.ready().empty()) {
      taken.push_back(std::move(stepwise.ready().front()));
      stepwise.ready().pop_front();
    }
  }
  if ((stepwise.error_status() != 0) != (whole.error_status() != 0) || stepwise.stopped() != whole.stopped()) {
    std::abort();
  }
  if (taken.size() != whole.ready().size()) std::abort();
  for (std::size_t i = 0; i < taken.size(); ++i) {
    if (!same(whole.ready()[i], taken[i])) std::abort();
  }

  if (!documented(whole.error_status()) || !documented(pieces.error_status())) std::abort();
  if ((whole.error_status() != 0) != (pieces.error_status() != 0)) std::abort();
  if (whole.stopped() != pieces.stopped()) std::abort();
  if (whole.ready().size() != pieces.ready().size()) std::abort();
  for (std::size_t i = 0; i < whole.ready().size(); ++i) {
    if (!same(whole.ready()[i], pieces.ready()[i])) std::abort();
  }
  return 0;
}
