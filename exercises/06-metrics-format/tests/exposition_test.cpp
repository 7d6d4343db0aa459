// exercises/06-metrics-format/tests: the exposition text as a scraper reads it: one HELP and
// TYPE per family before all of its samples, a counter named _total, label values escaped.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "exposition.h"

using exercise::exposition;
using exercise::Sample;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Two threads' figures, read thread by thread: the families arrive interleaved.
std::vector<Sample> two_threads() {
  return {
      {"handoff_requests", "counter", "requests", {{"thread", "loop-0"}}, 7},
      {"handoff_open", "gauge", "open connections", {{"thread", "loop-0"}}, 2},
      {"handoff_requests", "counter", "requests", {{"thread", "pool-0"}}, 3},
      {"handoff_open", "gauge", "open connections", {{"thread", "pool-0"}}, 0},
  };
}

}  // namespace

TEST_CASE("metrics: each family is announced once, and its samples follow it together") {
  const std::string text = exposition(two_threads());
  CHECK(count(text, "# TYPE handoff_requests_total counter\n") == 1);
  CHECK(count(text, "# HELP handoff_requests_total ") == 1);
  CHECK(count(text, "# TYPE handoff_open gauge\n") == 1);
  // The first family's TYPE line, then both of its samples, before the next family starts.
  const auto l = lines(text);
  REQUIRE(l.size() == 8);
  CHECK(l[1] == "# TYPE handoff_requests_total counter");
  CHECK(l[2].rfind("handoff_requests_total{thread=\"loop-0\"} 7", 0) == 0);
  CHECK(l[3].rfind("handoff_requests_total{thread=\"pool-0\"} 3", 0) == 0);
  CHECK(l[5] == "# TYPE handoff_open gauge");
}

TEST_CASE("metrics: a counter's name ends in _total, a gauge's does not") {
  const std::string text = exposition(two_threads());
  CHECK(text.find("\nhandoff_requests_total{thread=\"loop-0\"} 7\n") != std::string::npos);
  CHECK(text.find("\nhandoff_open{thread=\"pool-0\"} 0\n") != std::string::npos);
  CHECK(text.find("handoff_open_total") == std::string::npos);
}

TEST_CASE("metrics: a label value keeps its quote, backslash and line feed, escaped") {
  const std::string text =
      exposition({{"handoff_requests", "counter", "requests", {{"thread", "a\"b\\c\nd"}, {"role", "loop"}}, 1}});
  CHECK(text.find("handoff_requests_total{thread=\"a\\\"b\\\\c\\nd\",role=\"loop\"} 1\n") != std::string::npos);
  // Every line is a comment or a sample: no raw line feed splits one.
  for (const auto& line : lines(text)) CHECK((line.rfind("# ", 0) == 0 || line.rfind("handoff_", 0) == 0));
}
