// chapters/01-baseline/tests/adversarial/attack_test.cpp: stage 01 under attack, end to
// end: slow heads and bodies, a client that never reads, resets mid-request, a saturated
// pool, SIGTERM under pipelined load (chapter 01). Each attack must leave the server bounded and still
// serving a normal client. Labelled `adversarial` (besides `stage`); kept short, since CI
// runs them under the sanitizers too.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testkit/http_client.h"
#include "testkit/requests.h"
#include "testkit/stage_process.h"

using handoff::testkit::Client;
using handoff::testkit::dispatch_args;
using handoff::testkit::elapsed_ms;
using handoff::testkit::get;
using handoff::testkit::repeat;
using handoff::testkit::stage_binary;
using handoff::testkit::StageProcess;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
// "Served" means answered at all, not answered fast: a test here judges that one client's
// attack does not stop the server answering another, and a verdict must not depend on how
// fast the machine is (CI missed a 2 s bound once, a sanitized server beside a hog's 800
// streams on two shared cores). 15 s only catches a server that is stuck.
constexpr auto kServedWithin = 15000ms;
/// A normal client gets its answer (see kServedWithin).
void served(int port) {
  Client c(port);
  c.send(get("/"));
  auto r = c.read_response(kServedWithin);
  REQUIRE(r);
  CHECK(r->status == 200);
}
}  // namespace

TEST_CASE("stage 01: slow heads on many connections are cut at the header timeout while others are served",
          "[stage][adversarial][ch01]") {
  StageProcess stage(stage_binary(), dispatch_args("inline", {"--header-timeout-ms", "300"}));
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 50; ++i) slow.push_back(std::make_unique<Client>(stage.port()));
  const std::string head = "GET / HTTP/1.1\r\nHost: t\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa\r\n";
  for (std::size_t byte = 0; byte < 8; ++byte) {  // one byte per connection every 50 ms
    for (auto& c : slow) c->send(head.substr(byte, 1));
    std::this_thread::sleep_for(50ms);
  }
  served(stage.port());
  int cut = 0;
  for (auto& c : slow) {
    auto r = c->read_response(2000ms);
    if (r && r->status == 408 && c->closed_by_peer(1000ms)) ++cut;
  }
  CHECK(cut == 50);
}

TEST_CASE("stage 01: a body that stops arriving is answered 408 at the idle timeout", "[stage][adversarial][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), dispatch_args(dispatch, {"--idle-timeout-ms", "300"}));
  Client c(stage.port());
  c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n");
  for (int i = 0; i < 5; ++i) {  // a slow drip keeps it alive ...
    c.send("x");
    std::this_thread::sleep_for(100ms);
  }
  served(stage.port());
  const auto start = Clock::now();  // ... until it stops
  auto r = c.read_response(3000ms);
  REQUIRE(r);
  CHECK(r->status == 408);
  CHECK(elapsed_ms(start) < 1500);
  CHECK(c.closed_by_peer(1000ms));
}

TEST_CASE("stage 01: a client that never reads cannot make the server hold unbounded output",
          "[stage][adversarial][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), dispatch_args(dispatch));
  served(stage.port());
  const long before = stage.rss_kib();
  Client hog(stage.port());
  hog.send(repeat(get("/stream?chunks=10000"), 800));  // 128 MB of answers, never read
  std::this_thread::sleep_for(1500ms);
  served(stage.port());  // the server is not stuck on the hog
  const long grown = stage.rss_kib() - before;
  INFO("RSS grew by " << grown << " KiB");
#if defined(HANDOFF_SANITIZED)
  // A sanitizer's runtime keeps freed memory resident (ASan's quarantine is 256 MB) and
  // adds shadow memory, so RSS measures it, not the server: the bound is checked in the
  // release build; here the test checks only that the hog does not stall other clients.
  WARN("RSS bound checked in the release build only; grew by " << grown << " KiB");
#else
  CHECK(grown < 64 * 1024);  // unbounded, it grows by hundreds of MB
#endif
}

TEST_CASE("stage 01: clients that reset mid-request leave the server serving", "[stage][adversarial][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), dispatch_args(dispatch));
  for (int i = 0; i < 10; ++i) {
    Client c(stage.port());
    switch (i % 3) {
      case 0:
        c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 50\r\n\r\nhalf");  // mid-body
        break;
      case 1:
        c.send(repeat(get("/sleep?ms=100"), 8));  // work in flight
        break;
      default:
        c.send(repeat(get("/stream?chunks=10000"), 4));  // answers being written
        REQUIRE(c.await_bytes(1));
        break;
    }
    c.reset();
  }
  const auto start = Clock::now();
  served(stage.port());
  Client after(stage.port());
  after.send(get("/sleep?ms=1"));
  auto r = after.read_response(3000ms);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(elapsed_ms(start) < 1000);  // not behind the work of clients that have gone
}

TEST_CASE("stage 01: a saturated pool still answers routes that never block at once", "[stage][adversarial][ch01]") {
  StageProcess stage(stage_binary(), dispatch_args("pool"));
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<Client>(stage.port()));
    slow.back()->send(repeat(get("/sleep?ms=200"), 4));
  }
  std::this_thread::sleep_for(100ms);
  for (const char* target : {"/", "/json", "/stats"}) {
    Client fast(stage.port());
    const auto start = Clock::now();
    fast.send(get(target));
    auto r = fast.read_response(5000ms);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(elapsed_ms(start) < 1000);  // behind the pool's queue: 16 × 4 × 200 ms / 2 threads
  }
}

TEST_CASE("stage 01: SIGTERM under pipelined load answers whole or closes, and never truncates",
          "[stage][adversarial][ch01]") {
  const std::string dispatch = GENERATE("inline", "pool");
  StageProcess stage(stage_binary(), dispatch_args(dispatch, {"--drain-timeout-ms", "2000"}));
  constexpr int kClients = 8;
  std::atomic<int> started{0}, truncated{0}, bad{0}, answered{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kClients; ++t) {
    clients.emplace_back([&] {
      Client c(stage.port());
      const std::string batch = repeat(get("/sleep?ms=1") + get("/stream?chunks=50") + get("/"), 10);
      started.fetch_add(1);
      for (int round = 0; round < 100; ++round) {
        bool sent = true;
        try {
          c.send(batch);
        } catch (const std::exception&) {
          sent = false;  // the server has closed: read what it answered before
        }
        int got = 0;
        for (; got < 30; ++got) {
          auto r = c.read_response(3000ms);
          if (!r) break;
          if (r->status != 200) bad.fetch_add(1);
          answered.fetch_add(1);
          if (!r->keep_alive) break;
        }
        if (!sent || got < 30) {
          // Whatever ended the answers, the connection must close with no partial answer.
          if (!c.closed_by_peer(3000ms) || !c.leftover().empty()) truncated.fetch_add(1);
          return;
        }
      }
    });
  }
  while (started.load() < kClients) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(300ms);
  stage.signal(SIGTERM);
  for (auto& t : clients) t.join();
  CHECK(truncated.load() == 0);
  CHECK(bad.load() == 0);
  CHECK(answered.load() > 0);
  const auto code = stage.wait_exit(5000ms);
  REQUIRE(code);
  CHECK(*code == 0);
}

namespace {
/// CPU seconds the process has used so far (utime + stime from /proc/PID/stat).
double process_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}
}  // namespace

TEST_CASE("stage 01: out of descriptors, accept backs off instead of spinning, and recovers",
          "[stage][adversarial][ch01]") {
#if defined(HANDOFF_SANITIZED)
  // Under a sanitizer the stage's runtime needs descriptors this test takes away (UBSan's
  // vptr check reports every virtual call as invalid once /proc/self/maps cannot be
  // opened), so the test runs in the release build only.
  WARN("skipped under sanitizers: their runtimes need the descriptors this test exhausts");
  return;
#endif
  // prlimit execs the stage with a descriptor limit small enough to run out.
  StageProcess stage("/usr/bin/prlimit", {"--nofile=32:32", stage_binary(), "--dispatch", "inline"});
  std::vector<std::unique_ptr<Client>> crowd;
  for (int i = 0; i < 48; ++i) crowd.push_back(std::make_unique<Client>(stage.port()));
  std::this_thread::sleep_for(300ms);  // the loop has hit EMFILE by now
  const double before = process_cpu_seconds(stage.pid());
  std::this_thread::sleep_for(1s);
  const double spent = process_cpu_seconds(stage.pid()) - before;
  CHECK(spent < 0.3);  // a loop spinning on the listener's readiness would use the whole second
  crowd.clear();       // free descriptors: the backlog drains after the backoff
  Client late(stage.port());
  late.send(get("/"));
  auto r = late.read_response(5000ms);
  REQUIRE(r);
  CHECK(r->status == 200);
}
