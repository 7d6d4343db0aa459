// peers/loops/libuv_peer: the five loop workloads on libuv (chapter 04).
// Role: the libuv row of the loop peers' table. libuv has no call_soon: this program builds
// it the way uvloop does, a FIFO of (function, argument) drained by a uv_idle_t callback,
// which runs the entries queued when the drain started (later ones wait for the next
// iteration) and stops the idle handle when the queue is empty. call_soon_threadsafe is a
// mutex-guarded FIFO plus uv_async_send, drained by the async handle's callback (uvloop
// again). Timers are uv_timer_start / uv_timer_stop on a handle per timer, the executor is
// uv_queue_work on libuv's pool (4 threads by default, as the other peers are given), the
// echo is two uv_tcp_t on the loop. The default loop serves every workload in turn.
#include <netinet/in.h>
#include <semaphore.h>
#include <uv.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "loop_peer.h"

namespace handoff::peers {
namespace {

constexpr const char* kTool = "loop-peer-libuv";
constexpr std::size_t kMessage = 64;  // the echo's message, in bytes

[[noreturn]] void fatal(const char* what, int err) {
  std::fprintf(stderr, "%s: %s: %s\n", kTool, what, err ? uv_strerror(err) : "");
  std::fflush(stderr);
  std::_Exit(2);
}

void ok(int err, const char* what) {
  if (err < 0) fatal(what, err);
}

struct Entry {
  void (*fn)(void*);
  void* arg;
};

/// call_soon on libuv: a FIFO drained by an idle handle, one generation per drain. One per
/// loop, for the program's life (an inactive idle handle does not keep the loop running).
class SoonQueue {
 public:
  explicit SoonQueue(uv_loop_t* loop) {
    uv_idle_init(loop, &idle_);
    idle_.data = this;
  }
  void call_soon(void (*fn)(void*), void* arg) {
    queue_.push_back({fn, arg});
    if (!uv_is_active(reinterpret_cast<uv_handle_t*>(&idle_))) uv_idle_start(&idle_, drain);
  }

 private:
  static void drain(uv_idle_t* idle) {
    auto* self = static_cast<SoonQueue*>(idle->data);
    for (std::size_t n = self->queue_.size(); n > 0; --n) {
      const Entry e = self->queue_.front();
      self->queue_.pop_front();
      e.fn(e.arg);
    }
    if (self->queue_.empty()) uv_idle_stop(idle);
  }
  uv_idle_t idle_{};
  std::deque<Entry> queue_;
};

/// call_soon_threadsafe on libuv: a locked FIFO and uv_async_send; the async callback
/// drains what it finds.
class ThreadsafeQueue {
 public:
  explicit ThreadsafeQueue(uv_loop_t* loop) {
    ok(uv_async_init(loop, &async_, drain), "uv_async_init");
    async_.data = this;
  }
  void call_soon_threadsafe(void (*fn)(void*), void* arg) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back({fn, arg});
    }
    uv_async_send(&async_);
  }
  void close() { uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr); }

 private:
  static void drain(uv_async_t* async) {
    auto* self = static_cast<ThreadsafeQueue*>(async->data);
    std::vector<Entry> batch;
    {
      std::lock_guard lock(self->mu_);
      batch.swap(self->queue_);
    }
    for (const Entry& e : batch) e.fn(e.arg);
  }
  uv_async_t async_{};
  std::mutex mu_;
  std::vector<Entry> queue_;
};

uv_loop_t* loop() { return uv_default_loop(); }

SoonQueue& soon() {
  static SoonQueue queue(loop());
  return queue;
}

void close_handle(void* handle) { uv_close(static_cast<uv_handle_t*>(handle), nullptr); }

// (1) Each callback schedules the next until `ops` have run.
void chain_step(void* left) {
  if (--*static_cast<int*>(left) > 0) soon().call_soon(chain_step, left);
}
Span chain(int ops) {
  int left = ops;
  const Stopwatch watch;
  soon().call_soon(chain_step, &left);
  uv_run(loop(), UV_RUN_DEFAULT);
  return watch.stop();
}

// (2) Another thread posts; the loop's callback posts the semaphore it waits on.
Span ping_pong(int ops) {
  sem_t back;
  ::sem_init(&back, 0, 0);
  ThreadsafeQueue q(loop());
  const Stopwatch watch;
  std::thread other([&] {
    pin_poster();
    for (int i = 0; i < ops; ++i) {
      trips().start();
      q.call_soon_threadsafe([](void* s) { ::sem_post(static_cast<sem_t*>(s)); }, &back);
      while (::sem_wait(&back) != 0) {
      }
      trips().stop();
    }
    q.call_soon_threadsafe([](void* q) { static_cast<ThreadsafeQueue*>(q)->close(); }, &q);
  });
  uv_run(loop(), UV_RUN_DEFAULT);  // until the async handle is closed
  other.join();
  const Span span = watch.stop();
  ::sem_destroy(&back);
  return span;
}

// (3) From one callback: start a timer 1 s out and stop it, `ops` times.
void never(uv_timer_t*) { fatal("a cancelled timer fired", 0); }
// A handle per timer, its whole life in the span (init, start, stop, close), as the other
// peers make and drop a timer object per operation; only the handles' memory is allocated
// before it.
Span cancelled_timers(int ops) {
  std::vector<uv_timer_t> timers(static_cast<std::size_t>(ops));
  const Stopwatch watch;
  soon().call_soon(
      [](void* p) {
        for (uv_timer_t& t : *static_cast<std::vector<uv_timer_t>*>(p)) {
          uv_timer_init(loop(), &t);
          uv_timer_start(&t, never, 1000, 0);
          uv_timer_stop(&t);
          close_handle(&t);
        }
      },
      &timers);
  uv_run(loop(), UV_RUN_DEFAULT);  // the batch, then the handles' closes
  return watch.stop();
}

long wake_check() {
  std::vector<uv_timer_t> timers(100);
  for (uv_timer_t& t : timers) {
    uv_timer_init(loop(), &t);
    uv_timer_start(&t, never, 20, 0);
    uv_timer_stop(&t);
  }
  uv_timer_t live;
  uv_timer_init(loop(), &live);
  uv_timer_start(
      &live, [](uv_timer_t*) {}, 60, 0);
  const long before = thread_sleeps();
  uv_run(loop(), UV_RUN_DEFAULT);
  const long sleeps = thread_sleeps() - before;
  for (uv_timer_t& t : timers) close_handle(&t);
  close_handle(&live);
  uv_run(loop(), UV_RUN_DEFAULT);
  return sleeps;
}

// (4) A trivial job on the pool; its completion on the loop submits the next.
struct Executor {
  uv_work_t req;
  int left;
  volatile int sink;
};
void executor_job(uv_work_t* req) {
  auto* e = static_cast<Executor*>(req->data);
  e->sink = e->left + 1;
}
void executor_done(uv_work_t* req, int status) {
  ok(status, "uv_queue_work completion");
  auto* e = static_cast<Executor*>(req->data);
  if (--e->left > 0) ok(uv_queue_work(loop(), &e->req, executor_job, executor_done), "uv_queue_work");
}
Span executor(int ops) {
  Executor e{};
  e.req.data = &e;
  e.left = ops;
  const Stopwatch watch;
  ok(uv_queue_work(loop(), &e.req, executor_job, executor_done), "uv_queue_work");
  uv_run(loop(), UV_RUN_DEFAULT);
  return watch.stop();
}

// (5) One connection on loopback, client and server on the loop: the client writes 64
// bytes, the server writes back what it reads, the client writes again once all 64 are in.
struct Echo {
  uv_tcp_t listener, server, client;
  uv_connect_t connect;
  uv_write_t server_write, client_write;
  char message[kMessage] = {};
  char server_buf[kMessage * 4];
  char client_buf[kMessage * 4];
  std::size_t client_got = 0;
  int left = 0;
  bool connected = false, accepted = false;
};

void send_message(Echo* e) {
  uv_buf_t buf = uv_buf_init(e->message, kMessage);
  ok(uv_write(&e->client_write, reinterpret_cast<uv_stream_t*>(&e->client), &buf, 1,
              [](uv_write_t*, int status) { ok(status, "client write"); }),
     "uv_write (client)");
}

void on_server_read(uv_stream_t* s, ssize_t n, const uv_buf_t*) {
  if (n < 0) fatal("server read", static_cast<int>(n));
  auto* e = static_cast<Echo*>(s->data);
  uv_buf_t buf = uv_buf_init(e->server_buf, static_cast<unsigned>(n));
  ok(uv_write(&e->server_write, s, &buf, 1, [](uv_write_t*, int status) { ok(status, "server write"); }),
     "uv_write (server)");
}

void on_client_read(uv_stream_t* s, ssize_t n, const uv_buf_t*) {
  if (n < 0) fatal("client read", static_cast<int>(n));
  auto* e = static_cast<Echo*>(s->data);
  e->client_got += static_cast<std::size_t>(n);
  if (e->client_got < kMessage) return;
  e->client_got = 0;
  if (--e->left > 0) {
    send_message(e);
  } else {
    uv_stop(loop());
  }
}

Span echo(int ops) {
  Echo e;
  e.listener.data = e.server.data = e.client.data = &e;
  sockaddr_in addr{};
  uv_ip4_addr("127.0.0.1", 0, &addr);
  uv_tcp_init(loop(), &e.listener);
  ok(uv_tcp_bind(&e.listener, reinterpret_cast<const sockaddr*>(&addr), 0), "uv_tcp_bind");
  ok(uv_listen(reinterpret_cast<uv_stream_t*>(&e.listener), 1,
               [](uv_stream_t* l, int status) {
                 ok(status, "listen");
                 auto* e = static_cast<Echo*>(l->data);
                 uv_tcp_init(loop(), &e->server);
                 ok(uv_accept(l, reinterpret_cast<uv_stream_t*>(&e->server)), "uv_accept");
                 uv_tcp_nodelay(&e->server, 1);
                 e->accepted = true;
               }),
     "uv_listen");
  int len = sizeof addr;
  uv_tcp_getsockname(&e.listener, reinterpret_cast<sockaddr*>(&addr), &len);
  uv_tcp_init(loop(), &e.client);
  uv_tcp_nodelay(&e.client, 1);
  e.connect.data = &e;
  ok(uv_tcp_connect(&e.connect, &e.client, reinterpret_cast<const sockaddr*>(&addr),
                    [](uv_connect_t* c, int status) {
                      ok(status, "connect");
                      static_cast<Echo*>(c->data)->connected = true;
                    }),
     "uv_tcp_connect");
  while (!e.connected || !e.accepted) uv_run(loop(), UV_RUN_ONCE);

  const auto alloc_server = [](uv_handle_t* h, std::size_t, uv_buf_t* b) {
    *b = uv_buf_init(static_cast<Echo*>(h->data)->server_buf, sizeof(Echo::server_buf));
  };
  const auto alloc_client = [](uv_handle_t* h, std::size_t, uv_buf_t* b) {
    *b = uv_buf_init(static_cast<Echo*>(h->data)->client_buf, sizeof(Echo::client_buf));
  };
  e.left = ops;
  const Stopwatch watch;
  uv_read_start(reinterpret_cast<uv_stream_t*>(&e.server), alloc_server, on_server_read);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&e.client), alloc_client, on_client_read);
  send_message(&e);
  uv_run(loop(), UV_RUN_DEFAULT);  // until uv_stop after the last round trip
  const Span span = watch.stop();
  close_handle(&e.client);
  close_handle(&e.server);
  close_handle(&e.listener);
  uv_run(loop(), UV_RUN_DEFAULT);
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
  return peer_main(argc, argv, Peer{kTool, "libuv", run, wake_check});
}
