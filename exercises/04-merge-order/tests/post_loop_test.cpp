// exercises/04-merge-order: local call_soon and thread-posted callbacks run in the order
// asyncio runs them: alternating from one callback, two producers interleaved, a stop()
// mid-turn and restarts with posts between runs; then each producer's order, bounded.
// The expected logs are asyncio's, copied from the committed logs of its runs of the
// same scripts, benchmarks/oracle/scenarios/*.expected (the oracle's CTest test checks
// that /usr/bin/python3's asyncio still prints them).
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "post_loop.h"
#include "testkit/watchdog.h"

using namespace std::chrono_literals;
using exercise::Callback;
using exercise::PostLoop;
using handoff::testkit::Watchdog;

namespace {

/// What every scripted log is compared against, said once: the failure prints yours first,
/// asyncio's second.
constexpr const char* kRule =
    "the log (yours first, asyncio's second) differs: a post marked m runs after the local callbacks numbered "
    "below m and after every earlier post, and before the local callback numbered m";

/// What ran, one label a line, with "-- run N" before each run: the oracle's log format
/// (benchmarks/oracle/README.md). Touched on the loop's thread only.
struct Log {
  std::string text;
  int runs = 0;
  /// A callback that logs `name`, then does `body`.
  Callback label(std::string name, Callback body = {}) {
    return [this, name = std::move(name), body = std::move(body)] {
      text += name + "\n";
      if (body) body();
    };
  }
  void run(PostLoop& loop) {
    text += "-- run " + std::to_string(++runs) + "\n";
    loop.run_forever();
  }
};

/// A producer thread, the oracle's `post P L1 L2 ...`: post() hands it callbacks, it calls
/// call_soon_threadsafe for each, in order, and post() returns once it has. So the posts
/// land exactly there, between the caller's previous and next steps.
class Producer {
 public:
  explicit Producer(PostLoop& loop) : loop_(loop), thread_([this] { serve(); }) {}
  ~Producer() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  void post(std::vector<Callback> cbs) {
    std::unique_lock lock(mu_);
    work_ = std::move(cbs);
    cv_.notify_all();
    REQUIRE(cv_.wait_for(lock, 5s, [this] { return work_.empty(); }));  // a stuck producer fails here
  }

 private:
  void serve() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return !work_.empty() || quit_; });
      if (work_.empty()) return;
      for (Callback& cb : work_) loop_.call_soon_threadsafe(std::move(cb));
      work_.clear();
      cv_.notify_all();
    }
  }

  PostLoop& loop_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Callback> work_;  // guarded by mu_
  bool quit_ = false;           // guarded by mu_
  std::thread thread_;
};

}  // namespace

TEST_CASE("merge: call_soon and a thread's posts, alternating from one callback, run in asyncio's order",
          "[exercise][ch04]") {
  Watchdog dog(20s, "alternate_local_thread");
  PostLoop loop;
  Log log;
  Producer p(loop);
  loop.call_soon(log.label("X", [&] {
    loop.call_soon(log.label("L1"));
    p.post({log.label("T1")});
    loop.call_soon(log.label("L2"));
    p.post({log.label("T2")});
    p.post({log.label("T3")});
    loop.call_soon(log.label("L3"));
    loop.call_soon(log.label("L4"));
    p.post({log.label("T4", [&] { loop.stop(); })});
  }));
  log.run(loop);
  // benchmarks/oracle/scenarios/alternate_local_thread.expected
  INFO(kRule);
  CHECK(log.text == "-- run 1\nX\nL1\nT1\nL2\nT2\nT3\nL3\nL4\nT4\n");
}

TEST_CASE("merge: two producers interleaved with call_soon keep their own order and the order of the posts",
          "[exercise][ch04]") {
  Watchdog dog(20s, "two_producers");
  PostLoop loop;
  Log log;
  Producer p(loop), q(loop);
  loop.call_soon(log.label("X", [&] {
    p.post({log.label("P1"), log.label("P2")});
    q.post({log.label("Q1")});
    loop.call_soon(log.label("L1"));
    p.post({log.label("P3")});
    q.post({log.label("Q2"), log.label("Q3")});
    loop.call_soon(log.label("Y", [&] {
      q.post({log.label("Q4")});
      p.post({log.label("P4")});
      loop.call_soon(log.label("L2", [&] { loop.stop(); }));
    }));
  }));
  log.run(loop);
  // benchmarks/oracle/scenarios/two_producers.expected
  INFO(kRule);
  CHECK(log.text == "-- run 1\nX\nP1\nP2\nQ1\nL1\nP3\nQ2\nQ3\nY\nQ4\nP4\nL2\n");
}

TEST_CASE("merge: what a turn stopped mid-way scheduled and posted leads the next run, in order", "[exercise][ch04]") {
  Watchdog dog(20s, "stop_mid_turn");
  PostLoop loop;
  Log log;
  Producer p(loop);
  loop.call_soon(log.label("A", [&] {
    loop.call_soon(log.label("A1"));
    loop.stop();
    p.post({log.label("T1")});
  }));
  loop.call_soon(log.label("B", [&] { loop.call_soon(log.label("B1")); }));
  loop.call_soon(log.label("C"));
  log.run(loop);
  loop.call_soon(log.label("M", [&] { loop.stop(); }));
  log.run(loop);
  // benchmarks/oracle/scenarios/stop_mid_turn.expected
  INFO(kRule);
  CHECK(log.text ==
        "-- run 1\nA\nB\nC\n"
        "-- run 2\nA1\nT1\nB1\nM\n");
}

TEST_CASE("merge: posts queued between runs keep their place across a stop and restarts", "[exercise][ch04]") {
  Watchdog dog(20s, "restart_keeps_fifo");
  PostLoop loop;
  Log log;
  Producer p(loop), q(loop);
  loop.call_soon(log.label("A", [&] {
    loop.call_soon(log.label("A1"));
    p.post({log.label("T0")});
    loop.stop();
  }));
  log.run(loop);
  p.post({log.label("T1"), log.label("T2")});
  loop.call_soon(log.label("M1", [&] { loop.stop(); }));
  q.post({log.label("U1")});
  log.run(loop);
  loop.stop();  // before the run: the run is one turn
  loop.call_soon(log.label("S1", [&] { loop.call_soon(log.label("S3")); }));
  loop.call_soon(log.label("S2"));
  log.run(loop);
  loop.call_soon(log.label("Z", [&] { loop.stop(); }));
  log.run(loop);
  // benchmarks/oracle/scenarios/restart_keeps_fifo.expected
  INFO(kRule);
  CHECK(log.text ==
        "-- run 1\nA\n"
        "-- run 2\nA1\nT0\nT1\nT2\nM1\nU1\n"
        "-- run 3\nS1\nS2\n"
        "-- run 4\nS3\nZ\n");
}

TEST_CASE("merge: a post from the loop's own thread runs between the call_soon before it and the one after",
          "[exercise][ch04]") {
  PostLoop loop;
  Log log;
  std::string want = "-- run 1\nX\n";
  loop.call_soon(log.label("X", [&] {
    for (int i = 0; i < 8; ++i) {
      loop.call_soon(log.label("l" + std::to_string(i)));
      loop.call_soon_threadsafe(log.label("s" + std::to_string(i)));
      want += "l" + std::to_string(i) + "\ns" + std::to_string(i) + "\n";
    }
    loop.call_soon(log.label("Z", [&] { loop.stop(); }));
    want += "Z\n";
  }));
  log.run(loop);
  INFO(kRule);
  CHECK(log.text == want);
}

TEST_CASE("merge: four producers racing the loop's own call_soon each keep their order", "[exercise][ch04]") {
  Watchdog dog(30s, "4 producers x 5000 posts");
  constexpr int kProducers = 4, kEach = 5000;
  PostLoop loop;
  std::vector<int> next(kProducers, 0);  // loop thread only, like every callback
  long out_of_order = 0, ran = 0;
  auto done = [&] {
    if (++ran == long{kProducers} * kEach) loop.stop();
  };
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) {
        loop.call_soon_threadsafe([&, p, i] {
          auto& n = next[static_cast<std::size_t>(p)];
          if (n != i) ++out_of_order;
          n = i + 1;
          // A local callback per post, so the marks of the posts in flight differ and
          // the merge puts posts among local callbacks, not only behind them.
          loop.call_soon([] {});
          done();
        });
      }
    });
  }
  loop.run_forever();  // a post that never runs keeps this going: the watchdog fails it
  for (auto& t : producers) t.join();
  INFO("a producer's posts ran out of the order it made them: posts keep the order in which they were "
       "queued, so a post merged later never goes ahead of an earlier one");
  CHECK(out_of_order == 0);
  CHECK(ran == long{kProducers} * kEach);
}
