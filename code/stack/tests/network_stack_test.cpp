// stack/tests/network_stack_test: the network-stack model (chapter 05), over real socket
// pairs: a send with the lock free goes out at once; a send while the lock is held is
// deferred and goes out before the holder's unlock returns; an empty packet pool sends take
// the lock and refill it; close() waits for deferred sends; many threads through one shared
// stack all arrive, in order per socket, with the counters adding up; what a full socket
// does not take waits in its send queue, in order, until push(); a socket whose peer has
// gone reports it and drops its queue. Bounded by watchdogs.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "stack/network_stack.h"
#include "stats/thread_stats.h"
#include "testkit/watchdog.h"

using handoff::stack::NetworkStack;
using handoff::stack::NetworkStackOptions;
using handoff::stack::SendPath;
using handoff::stack::StackSocket;
using handoff::stats::Counter;
using handoff::stats::ThreadStats;
using handoff::testkit::Watchdog;
using namespace std::chrono_literals;

namespace {

struct Pair {
  int fds[2] = {-1, -1};
  Pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0); }
  ~Pair() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  int tx() const { return fds[0]; }
  int rx() const { return fds[1]; }
};

std::string read_now(int fd) {
  char buf[65536];
  const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

TEST_CASE("network stack: a send with the lock free is transmitted at once by the caller", "[stack][ch05]") {
  NetworkStack stack;
  Pair p;
  StackSocket s(p.tx());
  const auto r = stack.send(s, "hello", 5);
  CHECK(r.path == SendPath::direct);
  CHECK(s.queued() == 0);
  CHECK(read_now(p.rx()) == "hello");
  const auto c = stack.snapshot();
  CHECK(c.sends == 1);
  CHECK(c.transmits == 1);
  CHECK(c.sends_deferred == 0);
  CHECK(c.send_lock_contends == 0);
  CHECK(c.bytes_sent == 5);
}

TEST_CASE("network stack: an answer's pieces go as one send(2), in a packet or, too large for one, joined",
          "[stack][ch05]") {
  NetworkStack stack;
  Pair p;
  StackSocket s(p.tx());
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", body = "hello";
  const iovec small[] = {{const_cast<char*>(head.data()), head.size()}, {const_cast<char*>(body.data()), body.size()}};
  CHECK(stack.send(s, small, nullptr).path == SendPath::direct);
  CHECK(read_now(p.rx()) == head + body);
  CHECK(stack.snapshot().transmits == 1);  // one send(2) for both pieces

  const std::string big(stack.pool().packet_bytes(), 'x');  // with the head, more than a packet
  const iovec large[] = {{const_cast<char*>(head.data()), head.size()}, {const_cast<char*>(big.data()), big.size()}};
  CHECK(stack.send(s, large, nullptr).path == SendPath::large);
  CHECK(read_now(p.rx()) == head + big);
  const auto c = stack.snapshot();
  CHECK(c.sends == 2);
  CHECK(c.transmits == 2);
  CHECK(c.bytes_sent == 2 * head.size() + body.size() + big.size());
}

TEST_CASE("network stack: a send while the lock is held is deferred to the holder and sent before its unlock returns",
          "[stack][ch05]") {
  Watchdog dog(10s, "deferred send");
  NetworkStack stack;
  Pair p;
  ThreadStats sender("sender", "worker");
  REQUIRE(stack.lock().try_lock());  // this thread is the holder
  StackSocket s(p.tx());
  handoff::stack::SendResult r;
  std::thread t([&] { r = stack.send(s, "deferred", 8, &sender); });
  t.join();  // returned without the lock
  CHECK(r.path == SendPath::deferred);
  CHECK(read_now(p.rx()).empty());  // not sent yet: the holder has not unlocked
  CHECK(s.queued() == 8);           // accepted, not yet the kernel's
  const auto unlocked = stack.lock().unlock();
  CHECK(unlocked.deferred_run == 1);
  CHECK(read_now(p.rx()) == "deferred");
  CHECK(s.queued() == 0);
  CHECK(sender.get(Counter::stack_deferred_work) == 1);
  CHECK(sender.get(Counter::stack_lock_contends) == 1);
  const auto c = stack.snapshot();
  CHECK(c.sends_deferred == 1);
  CHECK(c.send_lock_contends == 1);
  CHECK(c.lock.deferred_work == 1);
  CHECK(c.transmits == 1);
}

TEST_CASE("network stack: a send that finds the packet pool empty takes the lock and refills it", "[stack][ch05]") {
  NetworkStackOptions o;
  o.pool.packets = 4;
  o.pool.free_pool = 0;
  o.pool.refill_batch = 2;
  NetworkStack stack(o);
  Pair p;
  ThreadStats me("me", "worker");
  StackSocket s(p.tx());
  const auto first = stack.send(s, "a", 1, &me);
  CHECK(first.path == SendPath::pool_empty);
  const auto second = stack.send(s, "b", 1, &me);  // a refilled buffer
  CHECK(second.path == SendPath::direct);
  CHECK(read_now(p.rx()) == "ab");
  CHECK(me.get(Counter::stack_pool_empty_sends) == 1);
  const auto c = stack.snapshot();
  CHECK(c.pool_empty_sends == 1);
  // The empty send's refill, then its unlock's top-up (the reserve held a batch again).
  CHECK(c.pool.refills == 2);
  CHECK(c.pool.refilled == 4);
}

TEST_CASE("network stack: the holder's top-up at unlock keeps one sender from ever finding the pool empty",
          "[stack][ch05]") {
  NetworkStackOptions o;
  o.pool.packets = 8;
  o.pool.free_pool = 2;
  o.pool.refill_batch = 2;
  NetworkStack stack(o);
  Pair p;
  StackSocket s(p.tx());
  for (int i = 0; i < 1000; ++i) {
    stack.send(s, "x", 1);
    read_now(p.rx());
  }
  // Each send returns its buffer to the reserve under the lock, and every second unlock moves
  // two back: one reply in flight never outruns the pool.
  CHECK(stack.snapshot().pool_empty_sends == 0);
  CHECK(stack.snapshot().pool.refills > 0);
}

TEST_CASE("network stack: the unlock that runs deferred sends tops their buffers up into the pool", "[stack][ch05]") {
  Watchdog dog(10s, "top-up after deferred sends");
  NetworkStackOptions o;
  o.pool.packets = 2;
  o.pool.free_pool = 2;  // both buffers in the lock-free pool, none in the reserve
  o.pool.refill_batch = 2;
  NetworkStack stack(o);
  Pair p;
  StackSocket s(p.tx());
  REQUIRE(stack.lock().try_lock());  // this thread holds the lock: another thread's sends defer
  std::vector<SendPath> paths;
  std::thread t([&] {
    for (int i = 0; i < 2; ++i) paths.push_back(stack.send(s, "d", 1).path);  // takes both buffers
  });
  t.join();
  REQUIRE(paths == std::vector<SendPath>{SendPath::deferred, SendPath::deferred});
  // The unlock runs both sends; each gives its buffer back to the reserve, under the lock,
  // after any check a holder made before calling unlock. The lock's before_release tops the
  // pool up after them (before the weak-memory review nothing did, and the reserve kept both buffers).
  stack.lock().unlock();
  CHECK(read_now(p.rx()) == "dd");
  CHECK(stack.snapshot().pool.refilled == 2);  // one batch: both buffers
  // So the next send finds a buffer in the lock-free pool (before: the pool-empty path).
  CHECK(stack.send(s, "n", 1).path == SendPath::direct);
  CHECK(stack.snapshot().pool_empty_sends == 0);
}

TEST_CASE("network stack: a send larger than a packet buffer is sent whole under the lock", "[stack][ch05]") {
  NetworkStackOptions o;
  o.pool.packet_bytes = 16;
  NetworkStack stack(o);
  Pair p;
  const std::string big(100, 'x');
  StackSocket s(p.tx());
  const auto r = stack.send(s, big.data(), big.size());
  CHECK(r.path == SendPath::large);
  CHECK(s.queued() == 0);
  CHECK(read_now(p.rx()) == big);
}

TEST_CASE("network stack: close waits until a deferred send on the socket has gone out", "[stack][ch05]") {
  Watchdog dog(10s, "close after a deferred send");
  NetworkStack stack;
  Pair p;
  StackSocket s(p.tx());
  REQUIRE(stack.lock().try_lock());
  std::thread sender([&] { CHECK(stack.send(s, "last", 4).path == SendPath::deferred); });
  sender.join();
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    CHECK(stack.close(s) == 0);
    closed.store(true);
  });
  std::this_thread::sleep_for(20ms);
  CHECK_FALSE(closed.load());  // blocked on the lock
  stack.lock().unlock();
  closer.join();
  p.fds[0] = -1;
  CHECK(read_now(p.rx()) == "last");
  char c;
  CHECK(::recv(p.rx(), &c, 1, MSG_DONTWAIT) == 0);  // then the end of the stream
}

TEST_CASE("network stack: sends from many threads through one shared stack all arrive, in order per socket",
          "[stack][ch05]") {
  Watchdog dog(30s, "shared stack stress");
  NetworkStackOptions o;
  o.lock.buzz_ns = 1'000;
  o.pool.packets = 64;
  o.pool.free_pool = 8;
  o.pool.refill_batch = 4;
  NetworkStack stack(o);
  constexpr int kThreads = 4;
  constexpr int kSends = 3'000;
  std::vector<Pair> pairs(kThreads);
  std::vector<std::unique_ptr<ThreadStats>> stats;
  for (int t = 0; t < kThreads; ++t) stats.push_back(std::make_unique<ThreadStats>("w" + std::to_string(t), "worker"));
  // Each thread sends a reply and reads it back from its peer before the next, as a
  // request-response connection has one reply in flight.
  std::vector<std::string> received(kThreads);
  std::vector<std::unique_ptr<StackSocket>> sockets;
  for (auto& pair : pairs) sockets.push_back(std::make_unique<StackSocket>(pair.tx()));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    timeval limit{5, 0};
    REQUIRE(::setsockopt(pairs[t].rx(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) == 0);
    threads.emplace_back([&, t] {
      for (int i = 0; i < kSends; ++i) {
        const std::string msg = std::to_string(i) + "\n";
        stack.send(*sockets[t], msg.data(), msg.size(), stats[t].get());
        std::size_t got = 0;
        while (got < msg.size()) {
          char buf[64];
          const ssize_t n = ::recv(pairs[t].rx(), buf, msg.size() - got, 0);  // blocking, 5 s limit
          if (n <= 0) return;  // the CHECK on `received` below reports it
          received[t].append(buf, static_cast<std::size_t>(n));
          got += static_cast<std::size_t>(n);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    std::string expected;
    for (int i = 0; i < kSends; ++i) expected += std::to_string(i) + "\n";
    CHECK(received[t] == expected);
  }
  const auto c = stack.snapshot();
  CHECK(c.sends == std::uint64_t{kThreads} * kSends);
  CHECK(c.transmits == c.sends);
  CHECK(c.transmit_errors == 0);
  CHECK(c.short_transmits == 0);
  CHECK(c.lock.deferred_work == c.lock.deferred_run);
  std::uint64_t contends = 0, deferred = 0, empty = 0, wakes = 0;
  for (auto& s : stats) {
    wakes += s->get(Counter::stack_lock_wakes);
    contends += s->get(Counter::stack_lock_contends);
    deferred += s->get(Counter::stack_deferred_work);
    empty += s->get(Counter::stack_pool_empty_sends);
  }
  CHECK(contends == c.send_lock_contends);
  CHECK(deferred == c.sends_deferred);
  CHECK(empty == c.pool_empty_sends);
  CHECK(wakes == c.lock.lock_wakes);  // every unlock's wake is charged to the thread that sent it
  INFO(stack.to_json().dump());
  CHECK(c.pool.takes + c.pool_empty_sends == c.sends);
}

TEST_CASE("network stack: what the kernel does not take waits in the socket's send queue, in order, until push",
          "[stack][ch05]") {
  Watchdog dog(10s, "send queue");
  NetworkStackOptions o;
  o.pool.packet_bytes = 1024;
  NetworkStack stack(o);
  Pair p;
  int small = 4096;  // the kernel rounds it up; what matters is that it fills
  REQUIRE(::setsockopt(p.tx(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small) == 0);
  StackSocket s(p.tx());
  std::string sent;
  for (int i = 0; sent.size() < 1'000'000 && s.queued() == 0; ++i) {
    const std::string msg = std::to_string(i) + std::string(500, '.') + "\n";
    stack.send(s, msg.data(), msg.size());
    sent += msg;
  }
  REQUIRE(s.queued() > 0);        // the socket filled: the rest was queued, not lost
  for (int i = 0; i < 20; ++i) {  // later sends go behind the queue
    const std::string msg = "after" + std::to_string(i) + "\n";
    stack.send(s, msg.data(), msg.size());
    sent += msg;
  }
  std::string got;
  while (got.size() < sent.size()) {
    const std::string chunk = read_now(p.rx());
    if (chunk.empty()) {
      stack.push(s);  // the output edge's call
      std::this_thread::sleep_for(1ms);
      continue;
    }
    got += chunk;
  }
  CHECK(got == sent);
  stack.push(s);
  CHECK(s.queued() == 0);
  CHECK(stack.snapshot().short_transmits > 0);
  CHECK(stack.snapshot().pushes > 0);
}

TEST_CASE("network stack: a socket whose peer has gone says so and drops its queue", "[stack][ch05]") {
  NetworkStack stack;
  Pair p;
  StackSocket s(p.tx());
  ::close(p.fds[1]);
  p.fds[1] = -1;
  stack.send(s, "into the void", 13);
  CHECK(s.error() == EPIPE);
  CHECK(s.queued() == 0);
  stack.send(s, "more", 4);  // accepted and dropped: nobody will read it
  CHECK(s.queued() == 0);
  CHECK(stack.snapshot().transmit_errors == 1);
}

TEST_CASE("network stack: --stack-buzz-us converts as the flag spells it", "[stack][ch05]") {
  CHECK(handoff::stack::buzz_ns_from_us(-1) == -1);
  CHECK(handoff::stack::buzz_ns_from_us(100) == 100'000);
  CHECK(handoff::stack::buzz_ns_from_us(0) == 0);
}
