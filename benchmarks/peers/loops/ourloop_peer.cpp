// peers/loops/ourloop_peer: the loop workloads on our own callback loop, evloop::EventLoop
// (chapter 04).
// Role: our rows of the loop peers' table, written as libuv_peer.cpp and asio_peer.cpp are:
// call_soon is EventLoop::call_soon; call_soon_threadsafe is EventLoop::call_soon_threadsafe
// on the arm --hand-in picks (direct: the loop's queue and one poke; coordinator: seed 003's
// hop through a coordinator thread) and turn shape --turn picks, which also name the loop in
// the report ("ourloop", "ourloop-coord", "ourloop-drain"; --timer-clock call adds
// "-callclock"); a timer is call_later(1 s) then
// Handle::cancel; the echo is two non-blocking sockets on add_reader, writing at once and
// waiting for add_writer only for what the kernel did not take; the executor is
// evloop::Executor on chapter 03's ElasticPool. One loop serves every workload in turn; a run ends with stop(),
// since an idle EventLoop waits for more rather than returning as uv_run and
// io_context::run do.
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <semaphore.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <nlohmann/json.hpp>

#include "config/command_line.h"

#include "evloop/event_loop.h"
#include "evloop/executor.h"
#include "evloop/loop_flags.h"
#include "loop_peer.h"
#include "net/fd.h"
#include "net/listener.h"
#include "pool/elastic_pool.h"
#include "stats/thread_stats.h"
#include "testkit/pool_binding.h"

namespace handoff::peers {
namespace {

using evloop::EventLoop;
using evloop::HandIn;

constexpr const char* kTool = "loop-peer-ourloop";
constexpr std::size_t kMessage = 64;  // the echo's message, in bytes

[[noreturn]] void fatal(const char* what) {
  std::fprintf(stderr, "%s: %s: %s\n", kTool, what, errno != 0 ? std::strerror(errno) : "");
  std::fflush(stderr);
  std::_Exit(2);
}

evloop::EventLoopOptions g_options;  // from --turn and --hand-in, set before the loop is first used
bool g_spin_backoff = false;         // from --executor-spin: the executor's pool skips missing spins

EventLoop& loop() {
  static EventLoop l(g_options);
  return l;
}

// (1) Each callback schedules the next until `ops` have run; the last one stops the run.
struct Chain {
  int* left;
  void operator()() const {
    if (--*left > 0) {
      loop().call_soon(*this);
    } else {
      loop().stop();
    }
  }
};
Span chain(int ops) {
  int left = ops;
  const Stopwatch watch;
  loop().call_soon(Chain{&left});
  loop().run_forever();
  return watch.stop();
}

// (2) Another thread posts; the loop's callback posts the semaphore it waits on.
Span ping_pong(int ops) {
  sem_t back;
  ::sem_init(&back, 0, 0);
  const Stopwatch watch;
  std::thread other([&] {
    pin_poster();
    for (int i = 0; i < ops; ++i) {
      trips().start();
      loop().call_soon_threadsafe([&back] { ::sem_post(&back); });
      while (::sem_wait(&back) != 0) {
      }
      trips().stop();
    }
    loop().call_soon_threadsafe([] { loop().stop(); });
  });
  loop().run_forever();
  other.join();
  const Span span = watch.stop();
  ::sem_destroy(&back);
  return span;
}

// (3) From one callback: call_later(1 s) and cancel, `ops` times. Each cancelled timer is
// the heap's last entry, so its cancel drops it (TimerHeap::note_cancelled). The stop comes
// one turn later, so that a turn that drops what is left (TimerHeap::prune) is inside the
// span, not in the next workload's.
void never() {
  errno = 0;
  fatal("a cancelled timer fired");
}
Span cancelled_timers(int ops) {
  const Stopwatch watch;
  loop().call_soon([ops] {
    for (int i = 0; i < ops; ++i) loop().call_later(std::chrono::seconds(1), never).cancel();
    loop().call_soon([] { loop().stop(); });
  });
  loop().run_forever();
  return watch.stop();
}

// (4) A trivial job on chapter 03's elastic pool of 4 threads (its default options, or with
// --executor-spin backoff its idle spinner's backoff, "ourloop-backoff") through
// run_in_executor (evloop::Executor); its result, back on the loop as a callback, submits the
// next. The pool, its binding to the loop and the executor are made before the span and
// stopped after it, so the other workloads' turns do not ask an idle pool before every poll.
struct Executing {
  stats::Registry registry;
  pool::ElasticPool pool{pool::PoolConfig{0, 4}, [] {
                           pool::ElasticPoolOptions o;
                           o.spin_backoff = g_spin_backoff;
                           return o;
                         }()};
  testkit::PoolBinding binding{loop(), pool, registry};
  evloop::Executor executor{loop(), pool};
  int left = 0;
  ~Executing() { executor.stop(pool::HandlerPool::kNoDeadline); }

  void submit_next() {
    executor.submit([v = left] { return v + 1; },
                    [this](evloop::Result<int> r) {
                      if (std::move(r).get() != left + 1) fatal("an executor call came back with another's value");
                      if (--left > 0) {
                        submit_next();
                      } else {
                        loop().stop();
                      }
                    });
  }
};
// With HANDOFF_PEER_COUNTS set, each executor span also prints, on stderr, its threads'
// counts per round trip (the pool's spin catches, parks and syscalls, the loop's wakes
// sent): the accounting behind the row's CPU, outside the report.
void print_counts(const stats::Registry& registry, int ops) {
  const nlohmann::json j = registry.to_json();
  std::fprintf(stderr, "%s: executor counts per round trip (%d):", kTool, ops);
  for (const auto& t : j["threads"]) {
    std::fprintf(stderr, " %s[", t.value("name", "?").c_str());
    if (t.contains("cpu_us")) std::fprintf(stderr, " cpu_us=%.3g", t["cpu_us"].get<double>() / ops);  // its life's
    for (const auto& [key, v] : t["counters"].items()) {
      const double per = v.get<double>() / ops;
      if (per != 0) std::fprintf(stderr, " %s=%.3g", key.c_str(), per);
    }
    std::fprintf(stderr, " ]");
  }
  std::fprintf(stderr, "\n");
}

Span executor_round_trips(int ops) {
  Executing e;
  e.left = ops;
  const Stopwatch watch;
  loop().call_soon([&e] { e.submit_next(); });
  loop().run_forever();
  const Span span = watch.stop();
  if (std::getenv("HANDOFF_PEER_COUNTS") != nullptr) print_counts(e.registry, ops);
  return span;
}

long wake_check() {
  for (int i = 0; i < 100; ++i) loop().call_later(std::chrono::milliseconds(20), never).cancel();
  loop().call_later(std::chrono::milliseconds(60), [] { loop().stop(); });
  const long before = thread_sleeps();
  loop().run_forever();
  return thread_sleeps() - before;
}

// (5) One connection on loopback, client and server on the loop: the client writes 64
// bytes, the server writes back what it reads, the client writes again once all 64 are in.

/// A socket's output, as asyncio's transports write: send at once; what the kernel does not
/// take waits for writability (add_writer) and goes first.
struct Output {
  int fd = -1;
  std::string pending;
  void write(const char* p, std::size_t n) {
    if (pending.empty()) {
      const ssize_t sent = ::send(fd, p, n, MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN) fatal("send");
      const std::size_t took = sent < 0 ? 0 : static_cast<std::size_t>(sent);
      if (took == n) return;
      p += took;
      n -= took;
      loop().add_writer(fd, [this] { flush(); });
    }
    pending.append(p, n);
  }
  void flush() {
    const ssize_t sent = ::send(fd, pending.data(), pending.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno != EAGAIN) fatal("send");
      return;
    }
    pending.erase(0, static_cast<std::size_t>(sent));
    if (pending.empty()) loop().remove_writer(fd);
  }
};

struct Echo {
  net::Fd server, client;
  Output server_out, client_out;
  char message[kMessage] = {};
  char server_buf[kMessage * 4];
  char client_buf[kMessage * 4];
  std::size_t client_got = 0;
  int left = 0;

  void serve() {
    const ssize_t n = ::recv(server.get(), server_buf, sizeof server_buf, 0);
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) fatal("server recv");
    server_out.write(server_buf, static_cast<std::size_t>(n));
  }
  void receive() {
    const ssize_t n = ::recv(client.get(), client_buf, sizeof client_buf, 0);
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) fatal("client recv");
    client_got += static_cast<std::size_t>(n);
    if (client_got < kMessage) return;
    client_got = 0;
    if (--left > 0) {
      client_out.write(message, kMessage);
    } else {
      loop().stop();
    }
  }
};

void no_delay(int fd) {
  const int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fatal("TCP_NODELAY");
}

Span echo(int ops) {
  net::Listener listener = net::Listener::open("127.0.0.1", 0, false);
  Echo e;
  e.client.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!e.client) fatal("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(listener.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(e.client.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fatal("connect");
  if (listener.accept(e.server) != net::Listener::Accept::ok) fatal("accept");  // non-blocking, TCP_NODELAY
  const int flags = ::fcntl(e.client.get(), F_GETFL);
  if (flags < 0 || ::fcntl(e.client.get(), F_SETFL, flags | O_NONBLOCK) != 0) fatal("O_NONBLOCK");
  no_delay(e.client.get());
  e.server_out.fd = e.server.get();
  e.client_out.fd = e.client.get();
  e.left = ops;
  const Stopwatch watch;
  loop().add_reader(e.server.get(), [&e] { e.serve(); });
  loop().add_reader(e.client.get(), [&e] { e.receive(); });
  e.client_out.write(e.message, kMessage);
  loop().run_forever();  // until the client's last round trip stops it
  const Span span = watch.stop();
  loop().remove_reader(e.server.get());
  loop().remove_reader(e.client.get());
  return span;
}

Span run(Workload w, int ops) {
  switch (w) {
    case Workload::call_soon_chain:
      return chain(ops);
    case Workload::threadsafe_ping_pong:
      return ping_pong(ops);
    case Workload::cancelled_timer:
      return cancelled_timers(ops);
    case Workload::executor_round_trip:
      return executor_round_trips(ops);
    case Workload::tcp_echo:
      return echo(ops);
  }
  return {};
}

}  // namespace
}  // namespace handoff::peers

int main(int argc, char** argv) {
  using namespace handoff::peers;
  Peer peer{kTool, "ourloop", run, wake_check};
  return peer_main(argc, argv, peer, [](handoff::config::CommandLine& cli, Peer& p) {
    // The stage's own switches; the loop's name in the report says which arm ran.
    handoff::evloop::add_loop_flags(cli.app(), g_options);
    static std::string executor_spin = "fixed";
    cli.add_option("--executor-spin", executor_spin,
                   "the executor's pool after a job: fixed (chapter 03's idle spin every time) or backoff "
                   "(skip spins after spins that missed: sync/spin_backoff)")
        ->one_of({"fixed", "backoff"});
    cli.on_parsed([&p] {
      g_spin_backoff = executor_spin == "backoff";
      static std::string name;  // the report keeps a pointer to it
      name = std::string("ourloop") + (g_options.hand_in == HandIn::coordinator ? "-coord" : "") +
             (g_options.turn == handoff::evloop::TurnShape::drain ? "-drain" : "") +
             (g_options.timer_clock == handoff::evloop::TimerClock::per_call ? "-callclock" : "") +
             (g_spin_backoff ? "-backoff" : "");
      p.loop = name.c_str();
    });
  });
}
