// app/db_route: GET /db, two queries through the worker's upstream pool (chapter 04).
#include "app/db_route.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "app/demo_routes.h"
#include "config/bounds.h"
#include "upstream/conninfo_redact.h"
#include "evloop/task.h"
#include "upstream/pg_await.h"

namespace handoff::app {

void add_db_flags(CLI::App& app, DbOptions& o) {
  app.add_option("--pg", o.conninfo,
                 "libpq conninfo of the upstream PostgreSQL for GET /db (a host name is looked up on each worker's "
                 "bounded resolver, not by libpq on the loop; give a password in a password file, PGPASSFILE or "
                 "~/.pgpass, not here: where it is shown it is shown as ***); empty: no /db route");
  app.add_option("--pg-pool-size", o.pool.pool_size, "each worker's upstream pool: connections kept idle at most")
      ->check(config::integer_in(1, 1000))
      ->capture_default_str();
  app.add_option("--pg-max-overflow", o.pool.max_overflow,
                 "each worker's upstream pool: connections open beyond --pg-pool-size at most")
      ->check(config::integer_in(0, 1000))
      ->capture_default_str();
  app.add_option_function<long>(
         "--pg-timeout-ms", [&o](long ms) { o.pool.timeout = std::chrono::milliseconds(ms); },
         "how long a /db checkout waits for a connection before it answers 503")
      ->check(config::integer_in(0, 3'600'000))
      ->default_str("30000");
}

void UpstreamStatus::reached(bool at_start) {
  if (!at_start && reachable_.load(std::memory_order_relaxed)) return;  // nothing changes
  std::lock_guard lock(mu_);
  reachable_.store(true, std::memory_order_relaxed);
  error_.clear();
  publish(at_start);
}

void UpstreamStatus::unreachable(const std::string& error, bool at_start) {
  std::lock_guard lock(mu_);
  reachable_.store(false, std::memory_order_relaxed);
  error_ = error;
  publish(at_start);
}

std::string UpstreamStatus::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

void UpstreamStatus::publish(bool at_start) {
  nlohmann::json section{{"state", error_.empty() ? "reachable" : "unreachable"},
                         {"since", at_start ? "start" : "a connect"}};
  if (!error_.empty()) section["error"] = error_;
  registry_.set_section("upstream", std::move(section));
}

void check_upstream_at_start(DbOptions& options, stats::Registry& registry) {
  options.status = std::make_shared<UpstreamStatus>(registry);
  // libpq's reasons name hosts and users, not passwords; a malformed conninfo's may quote
  // part of it, so every reason shown is scrubbed.
  const std::string why =
      upstream::scrub_password(upstream::PgConnection::try_connect_once(options.conninfo, 3), options.conninfo);
  if (why.empty()) {
    options.status->reached(true);
    return;
  }
  options.status->unreachable(why, true);
  std::fprintf(stderr,
               "handoff: warning: upstream unreachable at start: %s (the pools keep trying; /db answers 503 until one "
               "connects)\n",
               why.c_str());
  std::fflush(stderr);
}

DbServices::DbServices(evloop::EventLoop& loop, stats::ThreadStats& loop_stats, const DbOptions& options)
    : loop_stats_(loop_stats),
      status_(options.status),
      resolver_(loop),
      pool_(
          loop,
          [this, &loop, conninfo = options.conninfo](Pool::Served done) {
            upstream::PgConnection::connect(
                loop, conninfo,
                [this, conninfo, done = std::move(done)](std::unique_ptr<upstream::PgConnection> c,
                                                         std::string error) {
                  error = upstream::scrub_password(error, conninfo);
                  if (status_ && c) status_->reached();
                  if (status_ && !c) status_->unreachable(error);
                  done(std::move(c), std::move(error));
                },
                &resolver_);
          },
          options.pool) {}

void DbServices::publish() noexcept {
  const upstream::QueuePoolCounts& now = pool_.counts();
  loop_stats_.add(stats::Counter::pg_opened, now.opened - published_.opened);
  loop_stats_.add(stats::Counter::pg_closed_on_checkin, now.closed_on_checkin - published_.closed_on_checkin);
  loop_stats_.add(stats::Counter::pg_closed_broken, now.closed_broken - published_.closed_broken);
  loop_stats_.add(stats::Counter::pg_checkouts, now.checkouts - published_.checkouts);
  loop_stats_.add(stats::Counter::pg_waits, now.waits - published_.waits);
  loop_stats_.add(stats::Counter::pg_timeouts, now.timeouts - published_.timeouts);
  loop_stats_.add(stats::Counter::pg_peak_open, now.peak_open - published_.peak_open);
  loop_stats_.add(stats::Counter::pg_checkin_turns, now.checkin_turns - published_.checkin_turns);
  loop_stats_.add(stats::Counter::pg_burst_checkins, now.burst_checkins - published_.burst_checkins);
  published_ = now;
}

WorkerServicesFactory db_services(DbOptions options) {
  return [options = std::move(options)](evloop::EventLoop& loop, stats::ThreadStats& loop_stats) {
    return std::make_unique<DbServices>(loop, loop_stats, options);
  };
}

namespace {

http::Response answer(int status, std::string body, std::string type = "text/plain") {
  return http::Response{status, std::move(type), {}, std::move(body)};
}

http::Response failed(int status, const std::string& why) { return answer(status, "upstream: " + why + "\n"); }

std::string first_value(const upstream::PgResult& r) {
  return r.rows.empty() || r.rows.front().empty() ? std::string() : r.rows.front().front();
}

http::Response answered(const upstream::PgResult& one, const upstream::PgResult& two, int backend_pid) {
  const nlohmann::json body{{"one", first_value(one)}, {"two", first_value(two)}, {"backend_pid", backend_pid}};
  return answer(200, body.dump(), "application/json");
}

// The statements and their parameters, made outside the coroutine: GCC 12 cannot keep an
// array temporary (an initializer list's) alive across a co_await in a coroutine's frame.
std::string first_statement(long sleep_ms) {
  return sleep_ms > 0 ? "SELECT 1 FROM pg_sleep($1::float8 / 1000)" : "SELECT 1";
}
std::vector<std::string> first_params(long sleep_ms) {
  return sleep_ms > 0 ? std::vector<std::string>{std::to_string(sleep_ms)} : std::vector<std::string>{};
}
std::string second_statement() { return "SELECT $1::int + 1"; }
std::vector<std::string> second_params(long n) { return {std::to_string(n)}; }

// Seed 003's request: one connection for two statements, checked in before the answer. With
// sleep_ms > 0 the first statement stays in flight that long (the tests of a client gone
// mid-query and of a drain).
evloop::Task<http::Response> two_queries(DbServices::Pool& pool, long n, long sleep_ms) {
  upstream::Lease<upstream::PgConnection> conn;
  std::string refused;
  try {
    conn = co_await upstream::checkout(pool);
  } catch (const upstream::CheckoutError& e) {
    refused = e.what();
  }
  if (!conn) co_return failed(503, refused);
  const int pid = conn->backend_pid();
  const upstream::PgResult one = co_await upstream::query(*conn, first_statement(sleep_ms), first_params(sleep_ms));
  if (!one.ok()) co_return failed(502, one.error);
  const upstream::PgResult two = co_await upstream::query(*conn, second_statement(), second_params(n));
  if (!two.ok()) co_return failed(502, two.error);
  conn.release();
  co_return answered(one, two, pid);
}

}  // namespace

void add_db_route(Router& router) {
  router.add_coroutine(
      "GET", "/db",
      [](const http::Request& req, http::Responder& out, const CoroutineContext& ctx) -> evloop::Task<void> {
        auto* db = dynamic_cast<DbServices*>(ctx.services);
        if (db == nullptr) {
          out.send(answer(503, "no upstream on this worker\n"));
          co_return;
        }
        http::Response r = co_await two_queries(db->pool(), query_number(req, "n", 1, 1'000'000),
                                                query_number(req, "sleep_ms", 0, 30'000));
        if (r.status == 503 && db->status() != nullptr) {
          const std::string unreachable = db->status()->error();  // what /stats says, word for word
          if (!unreachable.empty()) r = answer(503, "upstream unreachable: " + unreachable + "\n");
        }
        db->publish();  // before the answer: a client that reads /stats next sees this request
        out.send(std::move(r));
      });
}

}  // namespace handoff::app
