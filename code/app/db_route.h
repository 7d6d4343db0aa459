// app/db_route: GET /db, seed 003's request shape on a real PostgreSQL: two queries through
// the worker's upstream pool (chapter 04).
// Role: each worker owns a QueuePool of PgConnections on its loop (DbServices, made by the
// stage through ServerOptions::worker_services), which look a host name up on the worker's
// bounded resolver; /db checks a connection out, runs two
// statements, checks it in and answers with both results, and publishes the pool's counters
// into the loop thread's statistics, so /stats shows them per worker.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "app/coroutine_handler.h"
#include "app/router.h"
#include "evloop/event_loop.h"
#include "evloop/resolver.h"
#include "stats/thread_stats.h"
#include "upstream/pg_connection.h"
#include "upstream/queue_pool.h"

namespace CLI {
class App;  // CLI11's parser; the flags' .cpp includes CLI11 itself
}

namespace handoff::app {

/// Whether the upstream could be reached, as the server last found it: at start
/// (check_upstream_at_start), then at each connection the pools open. Published as /stats's
/// "upstream" section ({"state": "reachable"|"unreachable", "since": "start"|"a connect",
/// "error": libpq's reason}) and said by /db's 503 while unreachable. Any thread; every
/// worker's DbServices shares one. Cost: a relaxed load per connect that changes nothing.
class UpstreamStatus {
 public:
  explicit UpstreamStatus(stats::Registry& registry) : registry_(registry) {}
  /// A connect succeeded (`at_start`: the start-up check's).
  void reached(bool at_start = false);
  /// A connect failed with libpq's `error`.
  void unreachable(const std::string& error, bool at_start = false);
  /// Empty while reachable, else the reason /stats shows.
  std::string error() const;

 private:
  void publish(bool at_start);  // mu_ held
  stats::Registry& registry_;
  mutable std::mutex mu_;
  std::atomic<bool> reachable_{true};  // a hint read without mu_: only a change takes the lock
  std::string error_;                  // guarded by mu_
};

/// The upstream's switches: libpq's conninfo and the pool's sizes (seed 003's 4 + 2).
struct DbOptions {
  std::string conninfo;  ///< empty: no upstream and no /db route
  upstream::QueuePoolOptions pool{4, 2, std::chrono::milliseconds(30'000)};
  /// Set by check_upstream_at_start(): the status every worker's pool reports to.
  std::shared_ptr<UpstreamStatus> status;
};

/// Chapter 04's start-up check of the upstream, before the server starts: connect once
/// (blocking, at most 3 s) and, if that fails, print one warning line
/// (`handoff: warning: upstream unreachable at start: REASON (the pools keep trying; /db
/// answers 503 until one connects)`). The server starts either way: each /db's checkout
/// tries again, as it always has. Sets options.status, published in `registry` for /stats.
void check_upstream_at_start(DbOptions& options, stats::Registry& registry);

/// Add --pg (env HANDOFF_PG when the flag is absent), --pg-pool-size, --pg-max-overflow and
/// --pg-timeout-ms, writing into `options`.
void add_db_flags(CLI::App& app, DbOptions& options);

/// One worker's upstream: a QueuePool of PgConnections on the worker's loop, and the
/// publication of its counters (stats::Counter::pg_*) into the loop thread's statistics.
/// Loop thread only.
class DbServices final : public WorkerServices {
 public:
  using Pool = upstream::QueuePool<upstream::PgConnection>;
  DbServices(evloop::EventLoop& loop, stats::ThreadStats& loop_stats, const DbOptions& options);

  Pool& pool() noexcept { return pool_; }
  /// The upstream's shared status (null when the stage did not check it at start).
  UpstreamStatus* status() const noexcept { return status_.get(); }
  /// Add what the pool has counted since the last call to the loop thread's counters. /db
  /// calls it when it has checked its connection in; what happens between requests (a
  /// connection that arrives for a request already gone) shows at the next.
  void publish() noexcept;

 private:
  stats::ThreadStats& loop_stats_;
  std::shared_ptr<UpstreamStatus> status_;
  evloop::Resolver resolver_;  // before pool_: the pool's connects look names up on it
  Pool pool_;
  upstream::QueuePoolCounts published_;
};

/// ServerOptions::worker_services for a server whose workers each have a DbServices.
WorkerServicesFactory db_services(DbOptions options);

/// GET /db?n=N&sleep_ms=M  on the worker's DbServices: `SELECT 1` (with sleep_ms > 0:
///   `SELECT 1 FROM pg_sleep(M / 1000)`, a query that stays in flight M ms, at most 30 000),
///   then `SELECT $1::int + 1` with $1 = N (default 1, at most 1 000 000), on one checked-out
///   connection, checked in before the answer: JSON {"one", "two", "backend_pid"}. 503 when
///   the checkout fails (timeout, connect error: `upstream unreachable: REASON`, as /stats
///   says), 502 when a statement fails.
void add_db_route(Router& router);

}  // namespace handoff::app
