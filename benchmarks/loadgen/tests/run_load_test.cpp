// loadgen/tests/run_load_test: the generator end to end against an in-test server (chapter 01).
// Role: show each load model doing what it claims, each error counted where it belongs,
// and the open model charging a server stall to every request it delayed.
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>

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

}  // namespace

TEST_CASE("loadgen: the closed model completes requests on keep-alive connections", "[loadgen][ch01]") {
  TestServer server({});
  const LoadConfig c = config_for(server);
  const LoadResult r = run(c);
  REQUIRE(r.requests > 100);
  REQUIRE(all_errors(r.errors) == 0);
  REQUIRE(r.connects == 4);  // kept alive: no reconnects
  REQUIRE(r.latency.count() == r.requests);
  REQUIRE(r.duration_s == Approx(0.5).margin(1e-6));
  REQUIRE(r.bytes_read >= r.requests * 40);
  REQUIRE(r.worst_per_connection_ns == r.latency.max());
}

TEST_CASE("loadgen: warmup responses are not recorded", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.warmup_s = 0.3;
  c.duration_s = 0.3;
  c.keep_samples = true;
  const LoadResult r = run(c);
  REQUIRE(r.requests > 50);
  REQUIRE(r.samples.size() == r.requests);
  for (const Sample& s : r.samples) REQUIRE(s.send_ns + s.latency_ns >= 300 * kMs);
  REQUIRE(server.requests_seen() > r.requests);  // the warmup's requests reached the server
}

TEST_CASE("loadgen: a malformed response is counted as a parse error, not a hang", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::malformed});
  LoadConfig c = config_for(server);
  c.timeout_ms = 3000;  // longer than the run: only prompt detection can count anything
  const auto t0 = std::chrono::steady_clock::now();
  const LoadResult r = run(c);
  REQUIRE(std::chrono::steady_clock::now() - t0 < 2s);
  REQUIRE(r.errors.parse > 10);
  REQUIRE(r.requests == 0);
  REQUIRE(r.errors.timeout == 0);
  REQUIRE(r.connects > 10);  // each parse error reopens the connection
}

TEST_CASE("loadgen: chunked responses are counted as complete responses", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::chunked});
  const LoadResult r = run(config_for(server));
  REQUIRE(r.requests > 100);
  REQUIRE(all_errors(r.errors) == 0);
}

TEST_CASE("loadgen: a request that times out is counted and its connection reopened", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::silent});
  LoadConfig c = config_for(server);
  c.connections = 2;
  c.threads = 1;
  c.timeout_ms = 100;
  c.duration_s = 0.65;
  const LoadResult r = run(c);
  REQUIRE(r.requests == 0);
  REQUIRE(r.errors.timeout >= 8);  // about 6 per connection
  REQUIRE(r.errors.timeout <= 14);
  REQUIRE(r.connects >= 2 + r.errors.timeout);
}

TEST_CASE("loadgen: a response that closes the connection is no error and the connection is reopened",
          "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::close_each});
  const LoadResult r = run(config_for(server));
  REQUIRE(r.requests > 20);
  REQUIRE(all_errors(r.errors) == 0);
  REQUIRE(r.connects >= r.requests);
}

TEST_CASE("loadgen: 5xx responses count as requests and as status errors", "[loadgen][ch01]") {
  TestServer server({.reply = TestServer::Reply::status_503});
  const LoadResult r = run(config_for(server));
  REQUIRE(r.requests > 100);
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
  const LoadResult r = run(c);
  REQUIRE(r.requests == 777);
  REQUIRE(r.latency.count() == 777);
  REQUIRE(r.duration_s > 0);
  REQUIRE(r.duration_s < 10);
}

TEST_CASE("loadgen: pipelined POST bodies reach the server intact", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.method = "POST";
  c.body.assign(1000, 'b');
  c.pipeline = 8;
  const LoadResult r = run(c);
  REQUIRE(r.requests > 100);
  REQUIRE(all_errors(r.errors) == 0);
  REQUIRE(server.body_bytes_seen() == server.requests_seen() * 1000);
  REQUIRE(server.requests_seen() >= r.requests);
}

TEST_CASE("loadgen: the paced model sends one request per interval on each connection", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.model = Model::paced;
  c.connections = 2;
  c.threads = 1;
  c.interval_us = 10'000;
  c.duration_s = 0.5;
  const LoadResult r = run(c);
  // 2 connections x 50 slots; the last answers may fall after the window on a busy machine.
  REQUIRE(r.requests >= 90);
  REQUIRE(r.requests <= 100);
  REQUIRE(all_errors(r.errors) == 0);
}

TEST_CASE("loadgen: the open model holds its rate over the connections", "[loadgen][ch01]") {
  TestServer server({});
  LoadConfig c = config_for(server);
  c.model = Model::open;
  c.rate = 1000;
  c.duration_s = 0.5;
  const LoadResult r = run(c);
  REQUIRE(r.requests >= 475);
  REQUIRE(r.requests <= 500);
  REQUIRE(all_errors(r.errors) == 0);
}

TEST_CASE("loadgen: the open model charges a stall to every request it delayed but the closed model does not",
          "[loadgen][ch01]") {
  auto count_over = [](const LoadResult& r, std::int64_t ns) {
    std::uint64_t n = 0;
    for (const Sample& s : r.samples) n += s.latency_ns >= ns ? 1 : 0;
    return n;
  };

  // Open: 2000 requests/s fall due on schedule; the 200 ms stall delays about 400 of them,
  // and each is charged from its due time, so the wait shows as a ramp 200 ms .. 0.
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
  REQUIRE(o.requests >= 1900);
  REQUIRE(o.latency.max() >= 150 * kMs);
  REQUIRE(o.latency.percentile(0.999) >= 150 * kMs);
  REQUIRE(o.latency.percentile(0.99) >= 150 * kMs);
  REQUIRE(o.latency.percentile(0.9) >= 50 * kMs);
  REQUIRE(count_over(o, 100 * kMs) >= 100);  // many requests charged, not one per connection

  // Closed: the same stall holds one request per connection; the rest are quick.
  TestServer closed_server({.stall_ms = 200, .stall_after_ms = 300});
  LoadConfig closed = config_for(closed_server);
  closed.duration_s = 1.0;
  closed.keep_samples = true;
  const LoadResult k = run(closed);
  REQUIRE(closed_server.stalled());
  INFO("closed: requests " << k.requests << " p50 " << k.latency.percentile(0.5) / 1000 << " us, max "
                           << k.latency.max() / kMs << " ms");
  REQUIRE(k.latency.max() >= 150 * kMs);  // the stall happened to it too
  REQUIRE(k.latency.percentile(0.5) < 20 * kMs);
  REQUIRE(count_over(k, 100 * kMs) <= 2 * static_cast<std::uint64_t>(closed.connections));
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
                                           "worst_per_connection_us", "bytes_read"});
  REQUIRE(keys(j["config"]) == std::set<std::string>{"url", "method", "connections", "threads", "pipeline", "model",
                                                     "rate", "interval_us", "duration_s", "warmup_s", "body_size"});
  REQUIRE(keys(j["errors"]) ==
          std::set<std::string>{"connect", "read", "timeout", "parse", "status_4xx", "status_5xx"});
  REQUIRE(keys(j["latency_us"]) == std::set<std::string>{"p50", "p90", "p99", "p99_9", "max", "mean", "min"});
  REQUIRE(j["tool"] == "loadgen");
  REQUIRE(j["requests"].get<std::uint64_t>() == r.requests);
  REQUIRE(j["config"]["rate"].is_null());
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
