// server/out_queue tests: what one send is lent and what it leaves behind (chapter 01).
// Role: pin what both sides of the send seam rely on: the front pieces, the first perhaps
// partly sent, lent in order and bounded by the iovecs and by a byte budget (a packet), and
// a partial send leaving the rest of its piece at the front.
#include <catch2/catch.hpp>

#include <sys/uio.h>

#include <string>
#include <string_view>

#include "server/out_queue.h"

namespace {

using handoff::server::OutQueue;

std::string lent(const iovec* iov, std::size_t count) {
  std::string s;
  for (std::size_t i = 0; i < count; ++i) s.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
  return s;
}

}  // namespace

TEST_CASE("out queue: a partial send leaves the rest of its piece at the front, in order", "[server][ch01]") {
  OutQueue q;
  q.push("head:");
  q.push("body");
  q.push("next");
  REQUIRE(q.bytes() == 13);
  iovec iov[2];
  OutQueue::Gathered g = q.gather(iov);
  REQUIRE(g.count == 2);  // bounded by the iovecs
  REQUIRE(lent(iov, g.count) == "head:body");
  q.consume(7);  // "head:bo" went
  REQUIRE(q.bytes() == 6);
  g = q.gather(iov);
  REQUIRE(lent(iov, g.count) == "dynext");
  REQUIRE(g.bytes == 6);
  q.consume(6);
  REQUIRE(q.empty());
  REQUIRE(q.bytes() == 0);
}

TEST_CASE("out queue: a byte budget takes whole pieces, and a piece larger than it alone", "[server][ch01]") {
  OutQueue q;
  q.push(std::string(10, 'a'));
  q.push(std::string(10, 'b'));
  q.push(std::string(30, 'c'));
  iovec iov[16];
  OutQueue::Gathered g = q.gather(iov, 25);
  REQUIRE(g.count == 2);  // the third would pass 25 bytes
  REQUIRE(g.bytes == 20);
  q.consume(g.bytes);
  g = q.gather(iov, 25);
  REQUIRE(g.count == 1);  // larger than the budget: alone
  REQUIRE(g.bytes == 30);
}

TEST_CASE("out queue: an empty piece never stands at the front, where no send could take it", "[server][ch01]") {
  OutQueue q;
  q.push("abc");
  q.push(std::string());
  iovec iov[4];
  const OutQueue::Gathered g = q.gather(iov);
  q.consume(g.bytes);
  REQUIRE(q.empty());
}
