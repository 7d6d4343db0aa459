// peers/loops/asio_peer: the five loop workloads on Boost.Asio (chapter 04).
// Role: the Boost.Asio row of the loop peers' table: call_soon is asio::post onto an
// io_context run by one thread; call_soon_threadsafe is the same post from another thread
// (Asio's scheduler queue is locked and woken through its eventfd); a timer is a
// steady_timer per operation, async_wait then cancel, whose aborted handler Asio still
// runs on the loop (counted in the span); the executor is an asio::thread_pool of 4 threads
// whose job posts its completion back to the io_context; the echo is two ip::tcp sockets on
// the loop. One io_context serves every workload in turn (restarted after each run).
#include <semaphore.h>

// Asio's parts, not boost/asio.hpp: Boost 1.74's awaitable.hpp misses <utility> in C++20.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "loop_peer.h"

namespace handoff::peers {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

constexpr const char* kTool = "loop-peer-asio";
constexpr std::size_t kMessage = 64;  // the echo's message, in bytes

[[noreturn]] void fatal(const char* what, const error_code& ec) {
  std::fprintf(stderr, "%s: %s: %s\n", kTool, what, ec.message().c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

asio::io_context& io() {
  static asio::io_context context(1);
  return context;
}

/// Run the io_context until it has nothing left, and make it ready to run again.
void run_out() {
  io().run();
  io().restart();
}

// (1) Each handler posts the next until `ops` have run.
struct Chain {
  int left;
  void operator()() {
    if (--left > 0) asio::post(io(), [this] { (*this)(); });
  }
};
Span chain(int ops) {
  Chain c{ops};
  const Stopwatch watch;
  asio::post(io(), [&c] { c(); });
  run_out();
  return watch.stop();
}

// (2) Another thread posts; the loop's handler posts the semaphore it waits on.
Span ping_pong(int ops) {
  sem_t back;
  ::sem_init(&back, 0, 0);
  auto guard = asio::make_work_guard(io());
  const Stopwatch watch;
  std::thread other([&] {
    pin_poster();
    for (int i = 0; i < ops; ++i) {
      trips().start();
      asio::post(io(), [&back] { ::sem_post(&back); });
      while (::sem_wait(&back) != 0) {
      }
      trips().stop();
    }
    asio::post(io(), [&guard] { guard.reset(); });
  });
  run_out();  // until the guard is released
  other.join();
  const Span span = watch.stop();
  ::sem_destroy(&back);
  return span;
}

// (3) From one handler: a steady_timer 1 s out, waited on and cancelled, `ops` times.
void never(const error_code& ec) {
  if (ec != asio::error::operation_aborted) fatal("a cancelled timer fired", ec);
}
Span cancelled_timers(int ops) {
  const Stopwatch watch;
  asio::post(io(), [ops] {
    for (int i = 0; i < ops; ++i) {
      asio::steady_timer t(io(), std::chrono::seconds(1));
      t.async_wait(never);
      t.cancel();
    }
  });
  run_out();  // the batch, then every aborted handler
  return watch.stop();
}

long wake_check() {
  std::vector<asio::steady_timer> timers;
  timers.reserve(100);
  for (int i = 0; i < 100; ++i) {
    timers.emplace_back(io(), std::chrono::milliseconds(20));
    timers.back().async_wait(never);
    timers.back().cancel();
  }
  asio::steady_timer live(io(), std::chrono::milliseconds(60));
  live.async_wait([](const error_code& ec) {
    if (ec) fatal("the wake check's live timer", ec);
  });
  const long before = thread_sleeps();
  run_out();
  return thread_sleeps() - before;
}

// (4) A trivial job on the pool; its completion, posted to the loop, submits the next.
struct Executor {
  asio::thread_pool& pool;
  asio::executor_work_guard<asio::io_context::executor_type>& guard;  // the loop runs until the last completion
  int left;
  volatile int sink = 0;
  void submit() {
    asio::post(pool, [this] {
      sink = left + 1;
      asio::post(io(), [this] { done(); });
    });
  }
  void done() {
    if (--left > 0) {
      submit();
    } else {
      guard.reset();
    }
  }
};
Span executor(int ops) {
  static asio::thread_pool pool(4);
  auto guard = asio::make_work_guard(io());
  Executor e{pool, guard, ops};
  const Stopwatch watch;
  asio::post(io(), [&e] { e.submit(); });
  run_out();
  return watch.stop();
}

// (5) One connection on loopback, client and server on the loop: the client writes 64
// bytes, the server writes back what it reads, the client writes again once all 64 are in.
struct Echo {
  tcp::socket server{io()}, client{io()};
  char message[kMessage] = {};
  char server_buf[kMessage * 4];
  char client_buf[kMessage];
  int left = 0;

  void serve() {
    server.async_read_some(asio::buffer(server_buf), [this](const error_code& ec, std::size_t n) {
      if (ec == asio::error::operation_aborted) return;  // the round is over
      if (ec) fatal("server read", ec);
      asio::async_write(server, asio::buffer(server_buf, n), [this](const error_code& ec, std::size_t) {
        if (ec) fatal("server write", ec);
        serve();
      });
    });
  }
  void send() {
    asio::async_write(client, asio::buffer(message), [this](const error_code& ec, std::size_t) {
      if (ec) fatal("client write", ec);
      asio::async_read(client, asio::buffer(client_buf), [this](const error_code& ec, std::size_t) {
        if (ec) fatal("client read", ec);
        if (--left > 0) {
          send();
        } else {
          server.cancel();
        }
      });
    });
  }
};
Span echo(int ops) {
  tcp::acceptor acceptor(io(), tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  Echo e;
  e.client.connect(acceptor.local_endpoint());
  acceptor.accept(e.server);
  e.client.set_option(tcp::no_delay(true));
  e.server.set_option(tcp::no_delay(true));
  e.left = ops;
  const Stopwatch watch;
  e.serve();
  e.send();
  run_out();  // until the server's last read is cancelled
  return watch.stop();
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
      return executor(ops);
    case Workload::tcp_echo:
      return echo(ops);
  }
  return {};
}

}  // namespace
}  // namespace handoff::peers

int main(int argc, char** argv) {
  using namespace handoff::peers;
  return peer_main(argc, argv, Peer{kTool, "boost-asio", run, wake_check});
}
