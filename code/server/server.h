// server/server: the whole server: N workers, their threads, and graceful shutdown
// (chapter 01).
// Changed in chapters 05, 06: the pool topology's acceptor and the stacks (05), the started line (06).
// Role: open one listener per worker on a shared port (or, in chapter 05's pool topology,
// one listener whose acceptor deals the sockets to the workers), run each worker's loop on
// its own thread, and stop them all within the drain deadline, answering every request that
// was read and finishes in time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "app/router.h"
#include "net/listen_address.h"
#include "pool/handler_pool.h"
#include "server/options.h"
#include "server/start_failure.h"
#include "server/worker.h"
#include "stats/thread_stats.h"

namespace handoff::server {

/// The whole server: its workers, their threads, and a graceful stop.
class Server {
 public:
  /// Opens the listeners (so port() is known at once) and builds the workers. With
  /// dispatch = pool, `make_pool` builds each worker's pool. With topology = pool (which
  /// needs options.event_loop, else std::invalid_argument), one listener, on the first
  /// worker, which hands the accepted sockets round robin to every worker.
  Server(ServerOptions options, const app::Router& router, stats::Registry& registry, pool::PoolFactory make_pool);
  ~Server();

  std::uint16_t port() const noexcept { return port_; }
  /// The address the listeners are bound to, with the port chosen (`[::1]:8080`).
  const net::ListenAddress& address() const noexcept { return address_; }
  /// Whether the listener on `::` takes IPv4 clients too (net::Listener::dual_stack).
  bool dual_stack() const noexcept { return dual_stack_; }
  const ServerOptions& options() const noexcept { return options_; }

  /// Start every worker's loop thread, and return once each has started its loop. If one
  /// could not (an Onload stack refused), stop and join them all and throw its error.
  void start();
  /// Ask every worker to drain and stop. Any thread.
  void stop() noexcept;
  /// Join every worker (after stop(), or when they stop on their own).
  void wait();
  /// Wait at most `limit` for every worker's loop to return; the number still running.
  int wait_for(std::chrono::milliseconds limit);

 private:
  /// How long start() waits for every loop to start (a loop starts in microseconds).
  static constexpr std::chrono::milliseconds kStartWithin{10'000};

  ServerOptions options_;
  net::ListenAddress address_;
  std::uint16_t port_ = 0;
  bool dual_stack_ = false;
  std::vector<std::unique_ptr<stack::NetworkStack>> stacks_;  // chapter 05; outlive the workers' sockets
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable changed_cv_;  // started_ or finished_ moved
  std::size_t started_ = 0;             // workers that have started their loop, or failed to (guarded by mu_)
  std::exception_ptr start_failure_;    // the first worker's failure to start (guarded by mu_)
  int finished_ = 0;                    // workers whose run() has returned (guarded by mu_)
};

/// The main of every stage binary after its flags are parsed: start `server`, print the
/// readiness line (`handoff: listening on http://HOST:PORT`, an IPv6 host bracketed:
/// `http://[::1]:8080`; for `::`, a line on stderr first says whether it is dual-stack),
/// wait for SIGINT or SIGTERM,
/// drain, print the per-thread summary if asked, and return the exit status (0). The
/// drain is bounded: if a loop has not returned by --drain-timeout-ms plus a short grace
/// (an inline handler still running, pool threads stuck in handlers), it prints what it
/// would have printed, says what was abandoned, and ends the process at once (status 0).
/// `started`, if not empty, is printed on stderr once the server has started (chapter 06's
/// settings line), so that a start that fails is still the one line saying why.
int run_until_signal(Server& server, const stats::Registry& registry, const std::string& started = {});

}  // namespace handoff::server
