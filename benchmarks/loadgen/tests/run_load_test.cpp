// loadgen/tests/run_load_test: the generator end to end against an in-test server (chapter 01).
// Role: show each load model doing what it claims, each error counted where it belongs,
// and the open model charging a server stall to every request it delayed. No verdict
// depends on the machine's speed: a run that must do some work is bounded by a count of
// outcomes (`requests`), not by a window, and the paced and open models are judged by
// their schedule's accounting, which is exact on any machine.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "loadgen/load.h"
#include "loadgen/report.h"
#include "test_server.h"

using namespace handoff::loadgen;
using handoff::loadgen::testing::bounded;
using handoff::loadgen::testing::TestServer;
using namespace std::chrono_literals;

namespace {

constexpr std::int64_t kMs = 1'000'000;

LoadConfig config_for(const TestServer& server) {
  LoadConfig c;
  c.target = parse_target(server.url());
  c.connections = 4;
  c.threads = 2;
  c.duration_s = 0.5;
  c.timeout_ms = 2000;
  return c;
}

LoadResult run(const LoadConfig& c) {
  return bounded(20s, "run_load", [&c] { return run_load(c); });
}

std::uint64_t all_errors(const ErrorCounts& e) {
  return e.connect + e.read + e.timeout + e.parse + e.status_4xx + e.status_5xx;
}

// The schedule as the README states it: slot k of connection i of n falls due
// (i/n + k) x interval after the run's start. Every sample must answer a slot of its own
// connection's schedule, and no slot may be answered twice.
void require_samples_on_schedule(const LoadResult& r, int connections, double interval_ns) {
  std::set<std::pair<std::uint32_t, long long>> slots;
  for (const Sample& s : r.samples) {
    const double offset = static_cast<double>(s.connection) / connections;
    const long long k = std::llround(static_cast<double>(s.due_ns) / interval_ns - offset);
    INFO("connection " << s.connection << " due " << s.due_ns << " ns");
    REQUIRE(k >= 0);
    REQUIRE(std::llround((offset + static_cast<double>(k)) * interval_ns) == s.due_ns);
    REQUIRE(slots.emplace(s.connection, k).second);
  }
}

// The most requests charged at one instant: a sample's latency runs from its due time
// (open) or its send time (closed) to its answer.
std::uint64_t most_charged_at_once(const LoadResult& r, Model model) {
  std::vector<std::pair<std::int64_t, int>> edges;  // (time, +1 charged from, -1 answered)
  for (const Sample& s : r.samples) {
    const std::int64_t from = model == Model::open ? s.due_ns : s.send_ns;
    edges.emplace_back(from, +1);
    edges.emplace_back(from + s.latency_ns, -1);
  }
  std::sort(edges.begin(), edges.end());  // at one instant, an answer before a charge
  std::int64_t charged = 0;
  std::int64_t most = 0;
  for (const auto& edge : edges) most = std::max(most, charged += edge.second);
  return static_cast<std::uint64_t>(most);
}

}  // namespace

TEST_CASE("loadgen: the closed model completes requests on keep-alive connections", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.duration_s = 0;
  c.requests = 400;  // a count, not a window: the same work on any machine
  const LoadResult r = run(c);
  REQUIRE(r.requests == 400);
  REQUIRE(all_errors(r.errors) == 0);
  REQUIRE(r.connects == 4);  // kept alive: 400 answers, no reconnects
  REQUIRE(r.latency.count() == r.requests);
  REQUIRE(r.bytes_read >= r.requests * 40);
  REQUIRE(r.worst_per_connection_ns == r.latency.max());
  REQUIRE(r.schedule.due + r.schedule.sent + r.schedule.waiting == 0);  // no schedule
}

TEST_CASE("loadgen: warmup responses are not recorded", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.warmup_s = 0.3;
  c.duration_s = 0;
  c.requests = 100;
  c.keep_samples = true;
  const LoadResult r = run(c);
  REQUIRE(r.requests == 100);
  REQUIRE(r.samples.size() == r.requests);
  for (const Sample& s : r.samples) REQUIRE(s.send_ns + s.latency_ns >= 300 * kMs);
  REQUIRE(server.requests_seen() > r.requests);  // the warmup's requests reached the server
}

TEST_CASE("loadgen: a malformed response is counted as a parse error, not a hang", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::malformed});
  LoadConfig c = config_for(server);
  c.duration_s = 0;
  c.requests = 20;
  c.timeout_ms = 30'000;  // beyond run()'s 20 s bound: only prompt detection ends the run
  const LoadResult r = run(c);
  REQUIRE(r.errors.parse == 20);
  REQUIRE(r.requests == 0);
  REQUIRE(r.errors.timeout == 0);
  REQUIRE(r.connects >= 20);  // each parse error ends its connection: 20 errors, 20 connections
}

TEST_CASE("loadgen: chunked responses are counted as complete responses", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::chunked});
  LoadConfig c = config_for(server);
  c.duration_s = 0;
  c.requests = 200;
  const LoadResult r = run(c);
  REQUIRE(r.requests == 200);
  REQUIRE(all_errors(r.errors) == 0);
}

TEST_CASE("loadgen: a request that times out is counted and its connection reopened", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::silent});
  LoadConfig c = config_for(server);
  c.connections = 2;
  c.threads = 1;
  c.timeout_ms = 100;
  c.duration_s = 0;
  c.requests = 6;  // 2 connections reach 6 outcomes only by reopening after each timeout
  const LoadResult r = run(c);
  REQUIRE(r.requests == 0);
  REQUIRE(r.errors.timeout == 6);
  REQUIRE(all_errors(r.errors) == r.errors.timeout);
  REQUIRE(r.connects >= 6);  // each timeout closes its connection
  // One connection timed out 3 times in a row, each at least 100 ms after its send: a
  // floor that a slower machine only raises, and that an early timeout would break.
  REQUIRE(r.duration_s >= 0.3);
}

TEST_CASE("loadgen: a response that closes the connection is no error and the connection is reopened",
          "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::close_each});
  LoadConfig c = config_for(server);
  c.duration_s = 0;
  c.requests = 50;
  const LoadResult r = run(c);
  REQUIRE(r.requests == 50);
  REQUIRE(all_errors(r.errors) == 0);
  REQUIRE(r.connects >= r.requests);
}

TEST_CASE("loadgen: 5xx responses count as requests and as status errors", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::status_503});
  LoadConfig c = config_for(server);
  c.duration_s = 0;
  c.requests = 200;
  const LoadResult r = run(c);
  REQUIRE(r.requests == 200);
  REQUIRE(r.errors.status_5xx == r.requests);
  REQUIRE(r.errors.status_4xx == 0);
  REQUIRE(r.errors.parse + r.errors.read + r.errors.timeout + r.errors.connect == 0);
}

TEST_CASE("loadgen: --requests stops after exactly that many responses", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.connections = 3;
  c.pipeline = 4;
  c.duration_s = 0;
  c.requests = 777;
  const auto t0 = std::chrono::steady_clock::now();
  const LoadResult r = run(c);
  const std::chrono::duration<double> around = std::chrono::steady_clock::now() - t0;
  REQUIRE(r.requests == 777);
  REQUIRE(r.latency.count() == 777);
  REQUIRE(r.duration_s > 0);
  REQUIRE(r.duration_s <= around.count());  // the window, not "until forever"
}

TEST_CASE("loadgen: pipelined POST bodies reach the server intact", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.method = "POST";
  c.body.assign(1000, 'b');
  c.pipeline = 8;
  c.duration_s = 0;
  c.requests = 200;
  const LoadResult r = run(c);
  REQUIRE(r.requests == 200);
  REQUIRE(all_errors(r.errors) == 0);
  // Pipelined requests beyond the 200th may still be in the server's hands when run_load
  // returns: stop it first, so the two counters below are read as one snapshot.
  server.stop();
  REQUIRE(server.body_bytes_seen() == server.requests_seen() * 1000);
  REQUIRE(server.requests_seen() >= r.requests);
}

TEST_CASE("loadgen: the paced model sends one request per interval on each connection", "[loadgen][ch01]") {
  // The server stalls 50 ms once, about 100 ms in: several slots per connection fall due
  // behind the stalled answer and must go late, not be skipped.
  TestServer server({.stall_ms = 50, .stall_after_ms = 100});
  LoadConfig c = config_for(server);
  c.model = Model::paced;
  c.connections = 2;
  c.threads = 1;
  c.interval_us = 10'000;
  c.duration_s = 0.5;
  c.keep_samples = true;
  const LoadResult r = run(c);
  // Connection 0's slots fall due at 0, 10, 20 ... 490 ms, connection 1's at 5, 15 ... 495:
  // 50 each in the window, and every one sent or (when the window closed) still waiting.
  REQUIRE(r.schedule.due == 100);
  REQUIRE(r.schedule.sent + r.schedule.waiting == r.schedule.due);
  require_samples_on_schedule(r, c.connections, 10e6);
  // Answers arrive, each to a slot sent in the window; how many in 0.5 s is the machine's.
  REQUIRE(r.requests > 0);
  REQUIRE(r.requests <= r.schedule.sent);
  REQUIRE(all_errors(r.errors) == 0);
}

TEST_CASE("loadgen: the open model holds its rate over the connections", "[loadgen][ch01]") {
  // As with the paced model, a 50 ms stall makes a dozen slots per connection late.
  TestServer server({.stall_ms = 50, .stall_after_ms = 100});
  LoadConfig c = config_for(server);
  c.model = Model::open;
  c.rate = 1000;
  c.duration_s = 0.5;
  c.keep_samples = true;
  const LoadResult r = run(c);
  REQUIRE(r.duration_s == Approx(0.5).margin(1e-6));
  // 1000/s over 4 connections: connection i's slots fall due at i, i + 4, i + 8 ... ms,
  // 125 each in 0.5 s, whatever the answers do; every one sent or still waiting.
  REQUIRE(r.schedule.due == 500);
  REQUIRE(r.schedule.sent + r.schedule.waiting == r.schedule.due);
  require_samples_on_schedule(r, c.connections, 4e6);
  // Answers arrive, each to a slot sent in the window; how many in 0.5 s is the machine's.
  REQUIRE(r.requests > 0);
  REQUIRE(r.requests <= r.schedule.sent);
  REQUIRE(r.samples.size() == r.requests);
  REQUIRE(all_errors(r.errors) == 0);
}

TEST_CASE("loadgen: the open model charges a stall to every request it delayed but the closed model does not",
          "[loadgen][ch01]") {
  // Open: 2000 requests/s fall due on schedule; the 200 ms stall delays about 400 of them,
  // and each is charged from its due time, so the wait shows as a ramp 200 ms .. 0. The
  // lower bounds below only grow on a slower machine: the stall's slots are fixed by the
  // schedule, and any further delay is charged to them too.
  TestServer open_server({.stall_ms = 200, .stall_after_ms = 300});
  LoadConfig open = config_for(open_server);
  open.model = Model::open;
  open.rate = 2000;
  open.duration_s = 1.0;
  open.keep_samples = true;
  const LoadResult o = run(open);
  REQUIRE(open_server.stalled());
  INFO("open: requests " << o.requests << " p50 " << o.latency.percentile(0.5) / kMs << " ms, p99 "
                         << o.latency.percentile(0.99) / kMs << " ms, max " << o.latency.max() / kMs << " ms");
  // With one request outstanding per connection, about 100 slots per connection fell due
  // behind the stalled one: late, and sent when their connection was free, none skipped.
  REQUIRE(o.schedule.due == 2000);
  REQUIRE(o.schedule.sent + o.schedule.waiting == o.schedule.due);
  require_samples_on_schedule(o, open.connections, 2e6);
  REQUIRE(o.latency.max() >= 150 * kMs);
  REQUIRE(o.latency.percentile(0.999) >= 150 * kMs);
  REQUIRE(o.latency.percentile(0.99) >= 150 * kMs);
  REQUIRE(o.latency.percentile(0.9) >= 50 * kMs);
  REQUIRE(most_charged_at_once(o, Model::open) >= 100);  // many requests charged, not one per connection

  // Closed: the same stall holds one request per connection, and only those are charged
  // with it: a closed connection never has more than its pipeline (1) charged at once.
  TestServer closed_server({.stall_ms = 200, .stall_after_ms = 300});
  LoadConfig closed = config_for(closed_server);
  closed.duration_s = 1.0;
  closed.keep_samples = true;
  const LoadResult k = run(closed);
  REQUIRE(closed_server.stalled());
  INFO("closed: requests " << k.requests << " p50 " << k.latency.percentile(0.5) / 1000 << " us, max "
                           << k.latency.max() / kMs << " ms");
  REQUIRE(k.latency.max() >= 150 * kMs);  // the stall happened to it too
  REQUIRE(most_charged_at_once(k, Model::closed) <= static_cast<std::uint64_t>(closed.connections));
}

TEST_CASE("loadgen: a target nobody listens on is a setup error", "[loadgen][ch01]") {
  // Take a free port and release it, so that connecting to it is refused.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  LoadConfig c;
  c.target = parse_target("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/");
  c.duration_s = 0.2;
  REQUIRE_THROWS_AS(run_load(c), SetupError);
}

TEST_CASE("loadgen: an inconsistent configuration is refused before anything is sent", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.threads = 5;  // more than the 4 connections
  REQUIRE_THROWS_AS(run_load(c), std::invalid_argument);
  c = config_for(server);
  c.model = Model::open;  // without a rate
  REQUIRE_THROWS_AS(run_load(c), std::invalid_argument);
  c = config_for(server);
  c.body = "x";  // a body on a GET
  REQUIRE_THROWS_AS(run_load(c), std::invalid_argument);
  c = config_for(server);
  c.duration_s = 0;  // neither a duration nor a count
  REQUIRE_THROWS_AS(run_load(c), std::invalid_argument);
  REQUIRE(server.requests_seen() == 0);
}

TEST_CASE("loadgen: the JSON summary has exactly the agreed keys and the samples are CSV", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.duration_s = 0.2;
  c.keep_samples = true;
  const LoadResult r = run(c);
  const auto j = to_json(c, r);
  auto keys = [](const nlohmann::ordered_json& o) {
    std::set<std::string> s;
    for (auto it = o.begin(); it != o.end(); ++it) s.insert(it.key());
    return s;
  };
  REQUIRE(keys(j) == std::set<std::string>{"tool", "config", "requests", "errors", "duration_s", "rps", "latency_us",
                                           "worst_per_connection_us", "bytes_read", "schedule"});
  REQUIRE(keys(j["config"]) == std::set<std::string>{"url", "method", "connections", "threads", "pipeline", "model",
                                                     "rate", "interval_us", "duration_s", "warmup_s", "body_size"});
  REQUIRE(keys(j["errors"]) ==
          std::set<std::string>{"connect", "read", "timeout", "parse", "status_4xx", "status_5xx"});
  REQUIRE(keys(j["latency_us"]) == std::set<std::string>{"p50", "p90", "p99", "p99_9", "max", "mean", "min"});
  REQUIRE(j["tool"] == "loadgen");
  REQUIRE(j["requests"].get<std::uint64_t>() == r.requests);
  REQUIRE(j["config"]["rate"].is_null());
  REQUIRE(j["schedule"].is_null());  // the closed model has none
  LoadConfig open = c;
  open.model = Model::open;
  open.rate = 1000;
  REQUIRE(keys(to_json(open, r)["schedule"]) == std::set<std::string>{"due", "sent", "waiting"});
  REQUIRE(j["rps"].get<double>() == Approx(static_cast<double>(r.requests) / r.duration_s));

  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  REQUIRE(write_samples_csv(f, r));
  std::rewind(f);
  char line[256];
  REQUIRE(std::fgets(line, sizeof line, f) != nullptr);
  REQUIRE(std::string(line) == "send_time_us,due_time_us,latency_us,connection,status\n");
  std::uint64_t rows = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) ++rows;
  std::fclose(f);
  REQUIRE(rows == r.requests);
}
