// server/server: the whole server: N workers, their threads, and graceful shutdown
// (chapter 01).
// Role: open one listener per worker on a shared port (or, in chapter 05's pool topology,
// one listener whose acceptor deals the sockets to the workers), run each worker's loop on
// its own thread, and stop them all within the drain deadline, answering every request that
// was read and finishes in time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "app/router.h"
#include "pool/handler_pool.h"
#include "server/options.h"
#include "server/worker.h"
#include "stats/thread_stats.h"

namespace handoff::server {

class Server {
 public:
  /// Opens the listeners (so port() is known at once) and builds the workers. With
  /// dispatch = pool, `make_pool` builds each worker's pool. With topology = pool (which
  /// needs options.event_loop, else std::invalid_argument), one listener, on the first
  /// worker, which hands the accepted sockets round robin to every worker.
  Server(ServerOptions options, const app::Router& router, stats::Registry& registry, pool::PoolFactory make_pool);
  ~Server();

  std::uint16_t port() const noexcept { return port_; }
  const ServerOptions& options() const noexcept { return options_; }

  /// Start every worker's loop thread.
  void start();
  /// Ask every worker to drain and stop. Any thread.
  void stop() noexcept;
  /// Join every worker (after stop(), or when they stop on their own).
  void wait();
  /// Wait at most `limit` for every worker's loop to return; the number still running.
  int wait_for(std::chrono::milliseconds limit);

 private:
  ServerOptions options_;
  std::uint16_t port_ = 0;
  std::vector<std::unique_ptr<stack::NetworkStack>> stacks_;  // chapter 05; outlive the workers' sockets
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable finished_cv_;
  int finished_ = 0;  // workers whose run() has returned (guarded by mu_)
};

/// The main of every stage binary after its flags are parsed: start `server`, print the
/// readiness line (`handoff: listening on http://HOST:PORT`), wait for SIGINT or SIGTERM,
/// drain, print the per-thread summary if asked, and return the exit status (0). The
/// drain is bounded: if a loop has not returned by --drain-timeout-ms plus a short grace
/// (an inline handler still running, pool threads stuck in handlers), it prints what it
/// would have printed, says what was abandoned, and ends the process at once (status 0).
int run_until_signal(Server& server, const stats::Registry& registry);

}  // namespace handoff::server
