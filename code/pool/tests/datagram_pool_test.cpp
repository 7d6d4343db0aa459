// pool/tests/datagram_pool_test: the chapter 01 hand-off, driven by a real reactor on the
// test thread (which plays the loop), bounded by a watchdog.
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

#include "pool/datagram_pool.h"
#include "testkit/watchdog.h"

using namespace handoff;
using namespace std::chrono_literals;

namespace {

/// Collects frames per (conn, seq), as the loop would route them.
struct Collector final : pool::FrameSink {
  std::map<std::uint64_t, std::vector<pool::Frame::Kind>> kinds;
  std::map<std::uint64_t, std::string> bodies;
  std::size_t ends = 0;
  void on_frame(pool::Frame& f) override {
    kinds[f.seq].push_back(f.kind);
    bodies[f.seq] += f.response.body;
    if (f.kind == pool::Frame::Kind::end || f.kind == pool::Frame::Kind::whole) ++ends;
  }
};

const server::Handler kStream = [](const http::Request& req, server::Responder& out) {
  out.start_stream(200, "text/plain");
  for (int i = 0; i < 3; ++i) out.send_chunk(req.target + "#" + std::to_string(i) + ";");
  out.end_stream();
};

const server::Handler kSlow = [](const http::Request&, server::Responder& out) {
  std::this_thread::sleep_for(1ms);
  out.send(http::Response{200, "text/plain", {}, "ok"});
};

pool::Job* job(std::uint64_t seq, const server::Handler& h) {
  auto* j = new pool::Job{7, seq, {}, &h};
  j->request.target = "/job" + std::to_string(seq);
  return j;
}

struct Rig {
  loop::Reactor reactor;
  stats::Registry registry;
  stats::ThreadStats& loop_stats = registry.add("loop-test", "loop");
  Collector sink;
  pool::DatagramPool pool;
  explicit Rig(int threads) : pool(pool::PoolConfig{0, threads}) { pool.bind(reactor, sink, registry, loop_stats); }
  void run_until(std::size_t ends) {
    while (sink.ends < ends) reactor.poll(100);
  }
};

}  // namespace

TEST_CASE("datagram pool: every job completes exactly once, its frames in order", "[pool][ch01]") {
  testkit::Watchdog dog(20s, "1000 streamed jobs through 3 threads");
  Rig rig(3);
  constexpr std::uint64_t kJobs = 1000;
  for (std::uint64_t i = 0; i < kJobs; ++i) rig.pool.submit(job(i, kStream));
  rig.run_until(kJobs);
  rig.pool.stop();
  REQUIRE(rig.sink.kinds.size() == kJobs);
  using K = pool::Frame::Kind;
  const std::vector<K> expected{K::stream_head, K::chunk, K::chunk, K::chunk, K::end};
  for (std::uint64_t i = 0; i < kJobs; ++i) {
    INFO("job " << i);
    CHECK(rig.sink.kinds[i] == expected);
    CHECK(rig.sink.bodies[i] == "/job" + std::to_string(i) + "#0;/job" + std::to_string(i) + "#1;/job" +
                                    std::to_string(i) + "#2;");
  }
  CHECK(rig.sink.ends == kJobs);
}

TEST_CASE("datagram pool: a full lane backs up in the loop and drains, no job lost", "[pool][ch01]") {
  testkit::Watchdog dog(20s, "a burst far larger than the lane's queue");
  Rig rig(1);
  // The lane's send buffer holds a few hundred 8-byte datagrams; 3000 at once, while the
  // loop is not draining, must overflow into the backlog.
  for (std::uint64_t i = 0; i < 3000; ++i) rig.pool.submit(job(i, kStream));
  rig.run_until(3000);
  CHECK(rig.loop_stats.get(stats::Counter::handoff_eagain) > 0);
  rig.pool.stop();
  CHECK(rig.sink.kinds.size() == 3000);
}

TEST_CASE("datagram pool: stop with jobs in flight loses none, and the pills stop every thread",
          "[pool][ch01]") {
  testkit::Watchdog dog(20s, "stop() with 200 slow jobs queued");
  Rig rig(4);
  for (std::uint64_t i = 0; i < 200; ++i) rig.pool.submit(job(i, kSlow));
  rig.pool.stop();  // returns only when every thread has taken its pill and been joined
  CHECK(rig.sink.ends == 200);
  std::uint64_t jobs = 0;
  const nlohmann::json snapshot = rig.registry.to_json();
  for (const auto& t : snapshot["threads"]) {
    if (t["role"] == "pool") jobs += t["counters"]["requests"].get<std::uint64_t>();
  }
  CHECK(jobs == 200);
}

TEST_CASE("datagram pool: every crossing is a syscall on both sides", "[pool][ch01]") {
  testkit::Watchdog dog(20s, "100 whole-response jobs");
  Rig rig(1);
  const server::Handler whole = [](const http::Request&, server::Responder& out) {
    out.send(http::Response{200, "text/plain", {}, "x"});
  };
  for (std::uint64_t i = 0; i < 100; ++i) {
    rig.pool.submit(job(i, whole));
    rig.run_until(i + 1);  // one at a time: nothing is batched
  }
  rig.pool.stop();
  CHECK(rig.loop_stats.get(stats::Counter::handoff_sends) >= 100);  // one send per job
  CHECK(rig.loop_stats.get(stats::Counter::handoff_recvs) >= 200);  // the frame, then EAGAIN
}
