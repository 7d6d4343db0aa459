// server/worker: one event-loop thread with its listener, connections and pool (chapter 01).
// Changed in chapters 04, 05, 06: the callback loop (04), a stack, the acceptor and the inbox
// (05), a stop taken up (06).
// Role: run the loop (accept, read, dispatch, write, sweep timeouts), decide where each
// handler runs (inline on this thread, on the pool, or, from chapter 04, as a coroutine on
// the loop), route the pool's frames and the coroutines' answers back to their
// connections (those routes are server/dispatch.cpp), and drain gracefully on request.
// From chapter 05 a worker may also be the pool topology's acceptor (server/acceptor), or
// take the sockets an acceptor hands it (server/socket_inbox), and may claim an Onload
// stack of its own.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "app/coroutine_handler.h"
#include "app/router.h"
#include "evloop/event_loop.h"
#include "evloop/executor.h"
#include "evloop/task.h"
#include "evloop/task_set.h"
#include "http/date_cache.h"
#include "net/listener.h"
#include "net/onload_ext.h"
#include "pool/handler_pool.h"
#include "reactor/reactor.h"
#include "server/acceptor.h"
#include "server/connection.h"
#include "server/options.h"
#include "server/socket_inbox.h"
#include "stats/thread_stats.h"

namespace handoff::server {

/// One event-loop thread with its listener, connections and pool.
class Worker final : public pool::FrameSink, evloop::PollHooks {
 public:
  /// `pool` may be null when options.dispatch is inline. The listener is already open, or
  /// closed (`net::Listener{}`) for a worker fed only through adopt(). A router with
  /// coroutine routes, or options.worker_services, needs options.event_loop (else
  /// std::invalid_argument).
  Worker(const ServerOptions& options, int index, const app::Router& router, stats::Registry& registry,
         std::unique_ptr<pool::HandlerPool> pool, net::Listener listener);
  ~Worker();

  /// Chapter 05: send every answer through `stack` (a model of a user-level stack, shared
  /// with other workers or not), from the next connection adopted on. Null (the default):
  /// sendmsg(2) straight to the kernel. Call before start_loop(); `stack` outlives the worker.
  void send_through(stack::NetworkStack* stack) noexcept { stack_ = stack; }
  stack::NetworkStack* stack() const noexcept { return stack_; }

  /// Told once whether the loop started: null, or what start_loop() threw.
  using StartedFn = std::function<void(const std::exception_ptr& failed)>;
  /// The loop thread's body: returns once a requested stop has drained. It is
  /// start_loop(), run_turn() until it returns false, then finish_loop(). With `started`,
  /// an error of start_loop() goes to it (and the loop never runs) instead of escaping the
  /// thread; either way `started` hears before the first turn.
  void run(const StartedFn& started = nullptr);

  // The seam a whole-connection test or fuzzer drives the loop through, on one thread:
  // start_loop(), then adopt() sockets and run_turn() as it likes, then finish_loop().
  /// Register the listener (if open), the stop channel and the pool with the reactor.
  /// Under Onload with options.stack = per_worker, first claim the worker's own stack;
  /// Onload's refusal throws StartFailure (a start that cannot give what was asked).
  void start_loop();
  /// One turn: wait for events (at most until the next timer, and at most `max_wait_ms`;
  /// 0 only looks), handle them, sweep the timeouts when due. Returns false once a
  /// requested stop has drained.
  bool run_turn(int max_wait_ms = 1000);
  /// Destroy the coroutines still suspended, then the stage's services (on this thread),
  /// stop the pool and release what the last turn closed. Call once, after the last turn.
  void finish_loop();
  /// Serve an already-connected stream socket (e.g. one end of a socketpair) as a
  /// connection, as if the listener had accepted it. Returns its connection id. With its
  /// own Onload stack (options.stack = per_worker, under Onload), the socket is moved into
  /// it first, before anything reads it. Loop thread.
  std::uint64_t adopt(net::Fd fd);
  /// Chapter 05, the pool topology: any thread hands this worker an accepted socket, which
  /// its loop adopts in a callback posted with call_soon_threadsafe (server/socket_inbox). A
  /// worker that is draining closes it unserved at that callback, and one whose loop has
  /// finished closes it at once, so a socket in flight to a stopping worker is closed, never
  /// leaked. Needs an event loop (options.event_loop); without one the socket is closed.
  void hand_in(net::Fd fd) { inbox_.hand_in(std::move(fd)); }
  /// Chapter 05, the pool topology: make this worker the acceptor for `targets` (itself
  /// included, normally): its n-th accepted socket goes to targets[n % size], adopted
  /// directly when that is this worker, else through that worker's hand_in()
  /// (server/acceptor). Empty (the default): it adopts what it accepts. Before start_loop().
  void accept_for(std::vector<Worker*> targets) { acceptor_.deal_to(std::move(targets)); }
  /// Whether this worker claimed its own Onload stack at start_loop() (per_worker, under
  /// Onload, and Onload said yes).
  bool own_stack() const noexcept { return own_stack_; }
  /// Replace the time source (monotonic nanoseconds; default stats::monotonic_ns) before
  /// start_loop(), so a test can move time by hand.
  void set_clock(std::function<std::int64_t()> clock) { clock_ = std::move(clock); }
  /// Ask the loop to drain and stop. Any thread; async-signal-safe (one eventfd write).
  void request_stop() noexcept;
  /// Chapter 06: take up a stop that request_stop() asked for and this loop has not seen
  /// yet (its eventfd can wait behind this turn's other events, or behind a pipeline an
  /// inline handler works through). A connection calls it before each request it
  /// dispatches, so a request read after the stop was asked is the drain's, and the last
  /// one's answer says Connection: close. Loop thread.
  void take_up_stop() {
    // relaxed: the flag carries no data; the eventfd written after it wakes the loop, and
    // a look that misses it only leaves the stop to that wake.
    if (!draining_ && stop_asked_.load(std::memory_order_relaxed)) on_stop_requested();
  }

  // For connections (loop thread only).
  const ServerOptions& options() const noexcept { return options_; }
  reactor::Reactor& reactor() noexcept { return reactor_; }
  /// The worker's callback loop (null before chapter 04: options().event_loop unset).
  evloop::EventLoop* event_loop() noexcept { return event_loop_.get(); }
  /// Coroutine handlers started and not yet ended (0 without an event loop).
  std::size_t coroutines_in_flight() const noexcept { return coroutines_ ? coroutines_->size() : 0; }
  std::string_view date() const noexcept { return date_.get(); }
  /// The clock, read now: a deadline computed from a time read before the last wait
  /// would be short by however long that wait lasted.
  std::int64_t now_ns() const { return clock_(); }
  std::span<char> read_buffer() noexcept { return read_buffer_; }
  stats::ThreadStats& loop_stats() noexcept { return loop_stats_; }
  void dispatch(Connection& conn, std::uint64_t seq, http::Request&& request);
  /// Whether a connection with `jobs_in_pool` jobs out may hand the pool another: at most
  /// its fair share of twice the pool's threads among the connections with jobs out.
  bool may_submit(int jobs_in_pool) const noexcept;
  /// A connection's job sent its last frame; `conn_idle`: it has no other job out.
  void job_finished(bool conn_idle) noexcept;
  void close(Connection& conn);

  void on_frame(pool::Frame& frame) override;

 private:
  /// A descriptor's readiness routed to one of the worker's member functions.
  struct Callback final : reactor::IoHandler {
    Worker* worker = nullptr;
    void (Worker::*fn)() = nullptr;
    void on_io(std::uint32_t) override { (worker->*fn)(); }
  };
  void on_accept();
  void take_handed_in(net::Fd fd);
  void on_stop_requested();
  void sweep(std::int64_t now);
  int wait_timeout_ms() const;
  // One turn's two ends, shared by the plain loop and the EventLoop (whose poll calls them).
  int before_poll() override;
  void before_nonblocking_poll() override;
  void after_poll(int timeout_ms) override;
  void run_inline(Connection& conn, std::uint64_t seq, const http::Request& request, const http::Handler& handler);
  evloop::Task<void> run_coroutine(std::uint64_t conn_id, std::uint64_t seq, http::Request request,
                                   const app::CoroutineHandler& handler);
  /// Apply a piece of exchange `seq`'s answer to connection `conn_id`, if it is still open.
  void apply_to(std::uint64_t conn_id, std::uint64_t seq, pool::Frame::Kind kind, http::Response&& response);

  const ServerOptions& options_;
  const app::Router& router_;
  stats::ThreadStats& loop_stats_;
  stats::Registry& registry_;
  // Declared before the pool, so destroyed after it: the pool's destructor stops its
  // threads and removes its descriptors from this reactor, which must still exist. The
  // reactor is the callback loop's when there is one, else the worker's own.
  std::unique_ptr<evloop::EventLoop> event_loop_;
  std::optional<reactor::Reactor> own_reactor_;
  reactor::Reactor& reactor_;
  std::unique_ptr<pool::HandlerPool> pool_;
  // With an event loop (chapter 04): the pool as run_in_executor's executor (with a pool),
  // what coroutine handlers are given, and the coroutines in flight. Destroyed before the
  // loop, whose timers and watches a destroyed coroutine withdraws.
  std::unique_ptr<evloop::Executor> executor_;
  // The stage's per-worker services (options.worker_services): destroyed after the
  // coroutines, which may hold what they give (a leased connection), and before the loop.
  std::unique_ptr<app::WorkerServices> services_;
  std::optional<app::CoroutineContext> coroutine_context_;
  std::unique_ptr<evloop::TaskSet> coroutines_;
  net::Listener listener_;
  net::Fd stop_fd_;  // eventfd: request_stop() → the loop
  std::atomic<bool> stop_asked_{false};  // chapter 06: set by request_stop(), before stop_fd_
  Callback accept_cb_, stop_cb_;
  http::DateCache date_;
  std::array<char, std::size_t{64} * 1024> read_buffer_{};
  std::unordered_map<std::uint64_t, std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<Connection>> closed_;  // destroyed at the end of the turn
  std::uint64_t next_conn_id_ = 1;
  std::function<std::int64_t()> clock_;
  int busy_connections_ = 0;  // connections with at least one job in the pool
  std::int64_t next_sweep_ns_ = 0;
  std::int64_t sweep_interval_ns_;
  std::int64_t accept_resume_ns_ = 0;  // accepting paused until then (out of descriptors)
  std::int64_t drain_deadline_ns_ = 0;
  bool draining_ = false;
  // Chapter 05.
  int index_;
  stack::NetworkStack* stack_ = nullptr;  // chapter 05: see send_through()
  net::OnloadExt onload_;                 // looked up at start_loop(), only with options.stack = per_worker
  bool own_stack_ = false;
  Acceptor acceptor_;  // the pool topology's dealing, when this worker accepts for others
  // The sockets handed in and not yet taken; finish_loop() closes it, after which hand_in()
  // closes what it is given.
  SocketInbox inbox_;
};

}  // namespace handoff::server
