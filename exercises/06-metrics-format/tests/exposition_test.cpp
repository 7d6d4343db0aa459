// exercises/06-metrics-format/tests: the exposition text as a scraper reads it (chapter 06).
// Each test writes exposition()'s text to a file and hands it to tests/scrape.py, which
// checks the format's line rules (each family announced once before its samples, its samples
// together, a counter named _total, every line ended) and reads the text back with
// Prometheus's own parser: every sample must come back with its labels and its exact value.
// The grade is what a scraper reads, not the bytes: `a="1", b="2"` passes as `a="1",b="2"`.
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exposition.h"
#include "testkit/watchdog.h"

using exercise::exposition;
using exercise::Sample;
using namespace std::chrono_literals;

namespace {

struct Scrape {
  int status;
  std::string said;  // scrape.py's lines: a sentence per problem, or "ok"
};

/// exposition(samples), read by scrape.py. The text and the samples go through files in a
/// folder of this process's own, removed at the end.
Scrape scrape(const std::vector<Sample>& samples) {
  handoff::testkit::Watchdog dog(30s, "exposition() and the scrape of its text");
  const std::string text = exposition(samples);
  const auto dir = std::filesystem::temp_directory_path() / ("ex-06-metrics-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "text", std::ios::binary) << text;
  nlohmann::json expected = nlohmann::json::array();
  for (const Sample& s : samples) {
    expected.push_back({{"family", s.family}, {"type", s.type}, {"labels", s.labels}, {"value", s.value}});
  }
  std::ofstream(dir / "expected.json") << expected.dump();
  const std::string command = std::string(HANDOFF_PYTHON) + " " + HANDOFF_SCRAPE_PY + " " + (dir / "text").string() +
                              " " + (dir / "expected.json").string() + " 2>&1";
  Scrape out{-1, {}};
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    std::array<char, 512> chunk{};
    while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) out.said += chunk.data();
    out.status = ::pclose(pipe);
  } else {
    out.said = "could not start " + command;
  }
  std::filesystem::remove_all(dir);
  return out;
}

void require_scraped(const std::vector<Sample>& samples) {
  const Scrape s = scrape(samples);
  INFO("what a scraper says about exposition()'s text:\n" << s.said);
  const bool read_as_given = s.status == 0;
  CHECK(read_as_given);
}

// Two threads' figures, read thread by thread: the families arrive interleaved.
std::vector<Sample> two_threads() {
  return {
      {"handoff_requests", "counter", "requests", {{"thread", "loop-0"}, {"role", "loop"}}, 7},
      {"handoff_open", "gauge", "open connections", {{"thread", "loop-0"}, {"role", "loop"}}, 2},
      {"handoff_requests", "counter", "requests", {{"thread", "pool-0"}, {"role", "pool"}}, 3},
      {"handoff_open", "gauge", "open connections", {{"thread", "pool-0"}, {"role", "pool"}}, 0},
      {"handoff_requests", "counter", "requests", {{"thread", "pool-1"}, {"role", "pool"}}, 5},
  };
}

}  // namespace

TEST_CASE("metrics: each family is announced once, and its samples follow it together") {
  require_scraped(two_threads());
}

TEST_CASE("metrics: a counter's name ends in _total, a gauge's does not") {
  require_scraped({{"handoff_requests", "counter", "requests", {{"thread", "loop-0"}}, 1},
                   {"handoff_open", "gauge", "open connections", {{"thread", "loop-0"}}, 1}});
}

// A tab is written as it is: the format escapes only these three.
TEST_CASE("metrics: a label value keeps its quote, backslash and line feed, escaped") {
  require_scraped({{"handoff_requests", "counter", "requests", {{"thread", "a\"b\\c\nd\te"}, {"role", "loop"}}, 1},
                   {"handoff_requests", "counter", "requests", {{"thread", "C:\\new\\"}, {"role", "pool"}}, 2}});
}

TEST_CASE("metrics: every value reads back exactly, large counts and fractions alike") {
  require_scraped({{"handoff_requests", "counter", "requests", {{"thread", "loop-0"}}, 1234567},
                   {"handoff_requests", "counter", "requests", {{"thread", "pool-0"}}, 123456789012},
                   {"handoff_cpu_seconds", "counter", "CPU time", {{"thread", "loop-0"}}, 0.1},
                   {"handoff_cpu_seconds", "counter", "CPU time", {{"thread", "pool-0"}}, 0.1 + 0.2},  // 17 digits
                   {"handoff_cpu_seconds", "counter", "CPU time", {{"thread", "pool-1"}}, 1.0 / 3},
                   {"handoff_open", "gauge", "open connections", {{"thread", "loop-0"}}, 1e-7}});
}
