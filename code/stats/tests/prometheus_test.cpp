// stats/tests/prometheus_test: /metrics' exposition text (chapter 06): a registry's threads
// and sections rendered as the format requires (one HELP and TYPE per family, its samples
// together, label values escaped, counters named _total, microseconds in seconds, the one
// high-water mark a gauge).
// The live route is parsed by Prometheus's own Python parser in stage 06's tests.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "stats/prometheus.h"
#include "stats/thread_stats.h"

using handoff::stats::Counter;
using handoff::stats::Registry;
using handoff::stats::to_prometheus;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("prometheus: each thread's counters form one family per counter, labelled by thread and role") {
  Registry registry;
  registry.add("loop-0", "loop").add(Counter::requests, 7);
  registry.add("pool-0", "pool").add(Counter::requests, 3);
  const std::string text = to_prometheus(registry.to_json());

  CHECK(text.find("handoff_requests_total{thread=\"loop-0\",role=\"loop\"} 7\n") != std::string::npos);
  CHECK(text.find("handoff_requests_total{thread=\"pool-0\",role=\"pool\"} 3\n") != std::string::npos);
  // One HELP and one TYPE for the family, before both samples, which sit together.
  CHECK(count(text, "# TYPE handoff_requests_total counter\n") == 1);
  const auto type_at = text.find("# TYPE handoff_requests_total");
  const auto first = text.find("handoff_requests_total{thread=\"loop-0\"");
  const auto second = text.find("handoff_requests_total{thread=\"pool-0\"");
  CHECK(type_at < first);
  CHECK(second == text.find('\n', first) + 1);
  // Every counter of the enum is exported for every thread, and the CPU in seconds.
  CHECK(count(text, "{thread=\"loop-0\",role=\"loop\"}") ==
        static_cast<std::size_t>(Counter::kCount) + 1);
  CHECK(count(text, "# TYPE handoff_thread_cpu_seconds_total counter\n") == 1);
}

TEST_CASE("prometheus: a counter of microseconds is exported in seconds, the format's base unit") {
  Registry registry;
  registry.add("loop-0", "loop").add(Counter::stack_lock_wait_us, 2500000);
  const std::string text = to_prometheus(registry.to_json());
  CHECK(text.find("handoff_stack_lock_wait_seconds_total{thread=\"loop-0\",role=\"loop\"} 2.5\n") != std::string::npos);
  CHECK(text.find("_us_total") == std::string::npos);
}

TEST_CASE("prometheus: the high-water mark is a gauge without _total") {
  Registry registry;
  registry.add("loop-0", "loop").add(Counter::pg_peak_open, 4);
  const std::string text = to_prometheus(registry.to_json());
  CHECK(text.find("# TYPE handoff_pg_peak_open gauge\n") != std::string::npos);
  CHECK(text.find("handoff_pg_peak_open{thread=\"loop-0\",role=\"loop\"} 4\n") != std::string::npos);
  CHECK(text.find("handoff_pg_peak_open_total") == std::string::npos);
}

TEST_CASE("prometheus: label values are escaped and names keep only the format's characters") {
  Registry registry;
  registry.add("a\"b\\c\nd", "loop");
  registry.set_section("up-stream", {{"state", "unreachable"}, {"error", "said \"no\"\n"}, {"open", 2}, {"ok", false}});
  const std::string text = to_prometheus(registry.to_json());
  CHECK(text.find("{thread=\"a\\\"b\\\\c\\nd\",role=\"loop\"}") != std::string::npos);
  CHECK(text.find("handoff_up_stream_open 2\n") != std::string::npos);
  CHECK(text.find("handoff_up_stream_ok 0\n") != std::string::npos);
  CHECK(text.find("handoff_up_stream_info{error=\"said \\\"no\\\"\\n\",state=\"unreachable\"} 1\n") != std::string::npos);
  // No raw line feed survives inside a sample: every line is a comment or a sample.
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    CHECK((line.rfind("# ", 0) == 0 || line.rfind("handoff_", 0) == 0));
    start = end + 1;
  }
}
