// testkit/pool_rig: a thread of the caller's plays the loop for any HandlerPool (chapters 01-03).
// Role: drive a pool without a server, pass by pass as server::Worker does, so the pool
// tests and the wake-rounds probe (benchmarks/probes/wake_rounds.cpp) run the real pool.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "pool/handler_pool.h"
#include "reactor/reactor.h"
#include "stats/thread_stats.h"

namespace handoff::pool::testing {

using namespace std::chrono_literals;

/// Collects frames per sequence number, as the loop would route them.
struct Collector final : FrameSink {
  std::map<std::uint64_t, std::vector<Frame::Kind>> kinds;
  std::map<std::uint64_t, std::string> bodies;
  std::map<std::uint64_t, int> statuses;  ///< of each whole answer or stream head
  std::size_t ends = 0;
  void on_frame(Frame& f) override {
    kinds[f.seq].push_back(f.kind);
    if (f.kind == Frame::Kind::whole || f.kind == Frame::Kind::stream_head) statuses[f.seq] = f.response.status;
    bodies[f.seq] += f.response.body;
    if (f.kind == Frame::Kind::end || f.kind == Frame::Kind::whole || f.kind == Frame::Kind::abort) ++ends;
  }
};

inline const http::Handler kStream = [](const http::Request& req, http::Responder& out) {
  out.start_stream(200, "text/plain");
  for (int i = 0; i < 3; ++i) out.send_chunk(req.target + "#" + std::to_string(i) + ";");
  out.end_stream();
};

inline const http::Handler kSlow = [](const http::Request&, http::Responder& out) {
  std::this_thread::sleep_for(1ms);
  out.send(http::Response{200, "text/plain", {}, "ok"});
};

inline const http::Handler kWhole = [](const http::Request&, http::Responder& out) {
  out.send(http::Response{200, "text/plain", {}, "x"});
};

/// stop()'s deadline for tests that mean "run everything".
constexpr std::int64_t kNoDeadline = HandlerPool::kNoDeadline;

inline Job* make_job(std::uint64_t seq, const http::Handler& h, std::shared_ptr<JobTicket> ticket = nullptr) {
  auto* j = new Job{7, seq, {}, &h, std::move(ticket)};
  j->request.target = "/job" + std::to_string(seq);
  return j;
}

/// A reactor, a registry and a pool, driven the way Worker::run drives them.
template <class Pool>
struct Rig {
  reactor::Reactor reactor;
  stats::Registry registry;
  stats::ThreadStats& loop_stats = registry.add("loop-test", "loop");
  Collector sink;
  Pool pool;

  template <class... Args>
  explicit Rig(int threads, Args&&... args) : pool(PoolConfig{0, threads}, std::forward<Args>(args)...) {
    pool.bind(reactor, sink, registry, loop_stats);
  }
  std::size_t polls = 0;  ///< turns on which ready_to_wait() said not to block (the loop's loop_polls)

  /// One loop turn as server::Worker::run_turn makes it: announce, wait (at most `wait_ms`,
  /// and at most what the pool's max_wait_ms() allows: the elastic pool's age check needs
  /// its capped wait), deliver.
  void turn(int wait_ms = 100) {
    const bool ready = pool.ready_to_wait();
    if (!ready) ++polls;
    reactor.poll(ready ? std::min(wait_ms, pool.max_wait_ms()) : 0);
    pool.after_wait();
  }
  /// Turn (waiting at most `wait_ms` each) until `pred()` holds or `limit` passes; true if it did.
  template <class Pred>
  bool turn_until(Pred pred, std::chrono::milliseconds limit, int wait_ms = 10) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred()) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      turn(wait_ms);
    }
    return true;
  }
  /// Turn until `ends` answers have completed or `limit` passes; true if they did.
  bool run_until(std::size_t ends, std::chrono::milliseconds limit = 10s) {
    return turn_until([&] { return sink.ends >= ends; }, limit);
  }
  /// The sum of one counter over the pool threads.
  std::uint64_t pool_counter(stats::Counter c) {
    const nlohmann::json snapshot = registry.to_json();
    std::uint64_t total = 0;
    for (const auto& t : snapshot["threads"]) {
      if (t["role"] == "pool")
        total += t["counters"][std::string(stats::counter_name(c))].template get<std::uint64_t>();
    }
    return total;
  }
};

}  // namespace handoff::pool::testing
