// exercises/04-one-generation/tests: a chain beside a socket made readable, one turn's
// generation, when the poll may wait, stop() mid-turn, and FIFO across turns and runs.
// The orders are asyncio's, as its runs of benchmarks/oracle/scenarios/ print them.
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/socket_pair.h"
#include "testkit/watchdog.h"
#include "turn_loop.h"

using namespace std::chrono_literals;
using exercise::Callback;
using exercise::TurnLoop;
using handoff::testkit::Watchdog;

namespace {

/// What ran, one label a line, with "-- run N" before each run: the oracle's log format
/// (benchmarks/oracle/README.md), so an expected log reads as the committed .expected file.
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
  void run(TurnLoop& loop) {
    text += "-- run " + std::to_string(++runs) + "\n";
    loop.run_forever();
  }
};

/// Reads the one byte a reader was woken for (never blocks).
void read_byte(int fd) {
  char got = 0;
  REQUIRE(::recv(fd, &got, 1, MSG_DONTWAIT) == 1);
}

/// Makes the other end of the pair readable; false if the byte was not sent (no Catch2
/// assertion here: one thread of the tests calls it off the test's thread).
bool write_byte(int fd) {
  const char byte = 'x';
  return ::send(fd, &byte, 1, 0) == 1;
}

constexpr long kChainCap = 10'000;

/// benchmarks/oracle/scenarios/chain_beside_socket: callback X makes a socket readable and
/// starts a self-rescheduling call_soon chain; the number of chain steps that run before
/// the socket's reader (the chain stops rescheduling once the reader ran, or at kChainCap).
long chain_before_reader() {
  TurnLoop loop;
  auto [a, b] = handoff::net::datagram_pair();
  long chain = 0, seen = -1;
  Callback step = [&] {
    ++chain;
    if (seen < 0 && chain < kChainCap) loop.call_soon(step);
  };
  loop.call_soon([&] {
    REQUIRE(write_byte(b.get()));
    loop.add_reader(a.get(), [&] {
      read_byte(a.get());
      seen = chain;
      loop.remove_reader(a.get());
      loop.stop();
    });
    loop.call_soon(step);
  });
  loop.run_forever();
  return seen;
}

}  // namespace

TEST_CASE("turn: a self-rescheduling chain lets a socket that became readable run after one chain step",
          "[exercise][ch04]") {
  Watchdog dog(20s, "a chain beside a readable socket");
  const long before = chain_before_reader();
  std::printf("chain callbacks before the readable socket's: %ld\n", before);
  // asyncio prints X, C.1, R: the poll of the turn after X finds the socket, and its reader
  // joins that turn's generation behind C.1. A drained turn runs the whole chain first.
  INFO(before << " chain steps ran before the readable socket's callback: a turn runs the callbacks queued when "
                 "its poll returned, so the socket waits one step, not the whole chain");
  CHECK(before == 1);
}

TEST_CASE("turn: one turn runs the callbacks queued when its poll returned, and what they schedule waits for the next",
          "[exercise][ch04]") {
  TurnLoop loop(50ms);
  Log log;
  loop.call_soon(log.label("A", [&] { loop.call_soon(log.label("A1")); }));
  loop.call_soon(log.label("B"));
  loop.run_once();
  INFO("one turn runs the callbacks queued when its poll returned (A, B); what they schedule (A1) waits for the "
       "next turn");
  CHECK(log.text == "A\nB\n");
  CHECK(loop.ready() == 1);  // A1, for the next turn
  loop.run_once();
  CHECK(log.text == "A\nB\nA1\n");
}

TEST_CASE("turn: a reader the turn's own poll found readable runs in that turn, behind what was ready",
          "[exercise][ch04]") {
  TurnLoop loop(50ms);
  Log log;
  auto [a, b] = handoff::net::datagram_pair();
  REQUIRE(write_byte(b.get()));
  loop.add_reader(a.get(), log.label("R", [&] {
    read_byte(a.get());
    loop.remove_reader(a.get());
  }));
  loop.call_soon(log.label("A"));
  loop.run_once();
  INFO("count the generation after the poll: the reader the turn's own poll found joins this turn, behind A");
  CHECK(log.text == "A\nR\n");  // asyncio's _run_once: poll, then count what is ready
}

TEST_CASE("turn: the poll does not wait while callbacks are ready or a stop is pending", "[exercise][ch04]") {
  Watchdog dog(20s, "turns with callbacks ready");
  TurnLoop loop(100ms);  // a wait costs 100 ms: the silent socket below never ends one
  auto [a, b] = handoff::net::datagram_pair();
  loop.add_reader(a.get(), [] { FAIL("nothing was written to the socket"); });
  SECTION("a chain of 20 steps: every turn has one ready") {
    int steps = 0;
    Callback step = [&] {
      if (++steps < 20) {
        loop.call_soon(step);
      } else {
        loop.stop();
      }
    };
    loop.call_soon(step);
    loop.run_forever();
    CHECK(steps == 20);
  }
  SECTION("a stop before the run: the run is one turn, and nothing is ready") {
    loop.stop();
    loop.run_forever();
  }
  INFO(loop.blocking_polls() << " polls were allowed to wait: the poll may wait only when nothing is ready and no "
                                "stop is pending");
  CHECK(loop.blocking_polls() == 0);
}

TEST_CASE("turn: with nothing ready, the poll waits for a socket to become readable", "[exercise][ch04]") {
  Watchdog dog(20s, "a wait for a socket");
  TurnLoop loop(5000ms);
  Log log;
  auto [a, b] = handoff::net::datagram_pair();
  loop.add_reader(a.get(), log.label("R", [&] {
    read_byte(a.get());
    loop.stop();
  }));
  bool sent = false;
  std::thread writer([fd = b.get(), &sent] {
    std::this_thread::sleep_for(20ms);
    sent = write_byte(fd);
  });
  log.run(loop);  // ends when R has run: after the write
  writer.join();
  REQUIRE(sent);
  INFO("with nothing ready and no stop pending the poll must wait (poll_step(true)), once, not spin");
  CHECK(log.text == "-- run 1\nR\n");
  CHECK(loop.blocking_polls() == 1);  // one wait, not a spin of polls that never wait
}

TEST_CASE("turn: stop() mid-turn: the turn still runs what it started with, and what it scheduled leads the next run",
          "[exercise][ch04]") {
  // benchmarks/oracle/scenarios/stop_mid_turn without its thread's post (T1).
  TurnLoop loop(50ms);
  Log log;
  loop.call_soon(log.label("A", [&] {
    loop.call_soon(log.label("A1"));
    loop.stop();
  }));
  loop.call_soon(log.label("B", [&] { loop.call_soon(log.label("B1")); }));
  loop.call_soon(log.label("C"));
  log.run(loop);
  INFO("the log (yours first, asyncio's second) differs: a stop ends the run after the current turn, which still "
       "runs all it started with; what it scheduled leads the next run");
  CHECK(loop.ready() == 2);  // A1 and B1, kept for the next run
  loop.call_soon(log.label("M", [&] { loop.stop(); }));
  log.run(loop);
  CHECK(log.text ==
        "-- run 1\nA\nB\nC\n"
        "-- run 2\nA1\nB1\nM\n");
}

TEST_CASE("turn: callbacks run in FIFO order across turns and across a stop and restarts", "[exercise][ch04]") {
  TurnLoop loop(50ms);
  Log log;
  INFO("the log (yours first, asyncio's second) differs: each turn runs one generation, in the order it was "
       "scheduled, and what it schedules runs in the next turn");
  SECTION("benchmarks/oracle/scenarios/nested_soon: each generation in scheduling order") {
    loop.call_soon(log.label("A", [&] {
      loop.call_soon(log.label("A1", [&] { loop.call_soon(log.label("A11", [&] { loop.stop(); })); }));
      loop.call_soon(log.label("A2"));
    }));
    loop.call_soon(log.label("B", [&] { loop.call_soon(log.label("B1")); }));
    loop.call_soon(log.label("C"));
    log.run(loop);
    CHECK(log.text == "-- run 1\nA\nB\nC\nA1\nA2\nB1\nA11\n");
  }
  SECTION("benchmarks/oracle/scenarios/restart_keeps_fifo without its threads' posts") {
    loop.call_soon(log.label("A", [&] {
      loop.call_soon(log.label("A1"));
      loop.stop();
    }));
    log.run(loop);
    loop.call_soon(log.label("M1", [&] { loop.stop(); }));
    log.run(loop);
    loop.stop();  // before the run: the run is one turn
    loop.call_soon(log.label("S1", [&] { loop.call_soon(log.label("S3")); }));
    loop.call_soon(log.label("S2"));
    log.run(loop);
    loop.call_soon(log.label("Z", [&] { loop.stop(); }));
    log.run(loop);
    CHECK(log.text ==
          "-- run 1\nA\n"
          "-- run 2\nA1\nM1\n"
          "-- run 3\nS1\nS2\n"
          "-- run 4\nS3\nZ\n");
  }
}
