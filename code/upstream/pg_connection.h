// upstream/pg_connection: one PostgreSQL connection driven by libpq's asynchronous API on the
// event loop (chapter 04).
// Role: the upstream a request's handler queries. Its socket is one more descriptor of the
// loop: connecting (PQconnectPoll), sending (PQflush) and reading results (PQconsumeInput,
// PQisBusy, PQgetResult) each run when the loop says the socket is ready, never waiting.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "evloop/event_loop.h"
#include "evloop/resolver.h"

struct pg_conn;  // libpq's PGconn and PGresult, kept out of every includer
struct pg_result;

namespace handoff::upstream {

/// One statement's outcome: its rows as text (SQL NULL reads as ""), or why it failed.
struct PgResult {
  std::string error;  ///< empty when the statement succeeded
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  bool ok() const noexcept { return error.empty(); }
};

/// A libpq connection on an evloop::EventLoop. Loop thread only.
///
/// Guarantees: no libpq call made here waits (the connection is non-blocking, and
/// PQgetResult is called only once PQisBusy says it will not wait), so the loop never
/// blocks on the server; every callback runs exactly once, on the loop, never before the
/// call that started it returns. The socket stays watched for reading while the connection
/// is idle, so a server-side close (pg_terminate_backend, a restart) is noticed at once:
/// usable() turns false and a later query fails with the reason. A query in flight when
/// the server goes away fails with libpq's message.
///
/// A host *name* (conninfo's `host`, or PGHOST when it has none) would be resolved by libpq
/// inside PQconnectStart with a blocking getaddrinfo on the loop thread; given a Resolver,
/// connect() looks it up there instead (the loop's bounded pool, chapter 04) and hands libpq
/// the addresses as `hostaddr`, keeping `host` for what libpq uses it for besides the lookup
/// (TLS's host name check, the password file, error messages). Not looked up: a `hostaddr`
/// already given, a socket directory (`/...` or `@...`), an address literal, a host list
/// (`a,b`: left to libpq). SCRAM's key derivation (4096 rounds of HMAC-SHA-256) runs on the loop as CPU work.
///
/// Cost: one epoll registration for the connection's life (the writer only while a send is
/// pending); one heap-allocated result per statement.
class PgConnection {
 public:
  /// Runs once, on the loop: the connection, or null and libpq's error.
  using Connected = std::function<void(std::unique_ptr<PgConnection>, std::string error)>;
  using QueryDone = std::function<void(PgResult)>;

  /// Start connecting with libpq's `conninfo` (keywords or a URI; what it omits comes from
  /// the PG* environment). The attempt owns itself until `done` runs; the loop must keep
  /// running until then. With a `resolver` (on the same loop, outliving the attempt's
  /// lookup), a host name is looked up on it first; a failed lookup fails the connect.
  static void connect(evloop::EventLoop& loop, const std::string& conninfo, Connected done,
                      evloop::Resolver* resolver = nullptr);

  /// A start-up check, never on a loop: connect with `conninfo` once, blocking, for at most
  /// `timeout_s` seconds (libpq's connect_timeout, unless the conninfo sets its own; a host
  /// name's lookup is bounded by the resolver's own timeout), log in, and close. Empty if it
  /// connected, else libpq's reason on one line.
  static std::string try_connect_once(const std::string& conninfo, int timeout_s);
  /// The host name connect() would look up for `conninfo` (empty: none, see above), and the
  /// conninfo that connects to `addresses` by address while keeping that name as `host`.
  /// Both throw std::invalid_argument for a conninfo libpq cannot parse.
  static std::string host_to_resolve(const std::string& conninfo);
  static std::string with_addresses(const std::string& conninfo, const std::vector<std::string>& addresses);

  /// Closes the connection (PQfinish, without waiting); a query still in flight is dropped
  /// and its callback never runs.
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  /// Send one statement with text parameters ($1, $2, ...). One at a time: a query while
  /// another is in flight, or on a broken connection, fails (through `done`).
  void query(const std::string& sql, const std::vector<std::string>& params, QueryDone done);

  /// Connected, not broken, no query in flight: fit to go back to a pool.
  bool usable() const noexcept;
  bool broken() const noexcept { return !broken_reason_.empty(); }
  /// Why the connection broke (libpq's message, after the server's last notice if any).
  const std::string& broken_reason() const noexcept { return broken_reason_; }
  /// The server process serving this connection (pg_stat_activity.pid).
  int backend_pid() const noexcept;
  /// Whether libpq's send side is non-blocking (PQisnonblocking): true once connected.
  bool nonblocking() const noexcept;

 private:
  explicit PgConnection(evloop::EventLoop& loop);
  static void start(evloop::EventLoop& loop, const std::string& conninfo, Connected done);
  static void on_notice(void* self, const char* message);
  void connect_step();
  void end_connect(std::string error);
  void on_readable();
  bool flush();
  void collect();
  void absorb(const pg_result* r);
  void finish_query();
  void fail_query(std::string error);
  void fail_later(QueryDone done, std::string error);
  void mark_broken(std::string why);
  void unwatch();

  evloop::EventLoop& loop_;
  pg_conn* conn_ = nullptr;
  int fd_ = -1;  // the socket the loop watches now (-1: none)
  bool writer_ = false;
  std::unique_ptr<PgConnection> self_;  // while connecting: the attempt owns itself
  Connected on_connected_;
  QueryDone on_done_;  // set while a query is in flight
  PgResult result_;
  std::string last_notice_;
  std::string broken_reason_;
};

}  // namespace handoff::upstream
