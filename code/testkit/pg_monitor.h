// testkit/pg_monitor: a test's own blocking view of the PostgreSQL it runs against (chapter 04).
// Role: read what the server says about itself (pg_stat_activity, pg_stat_database) between
// or beside the loop's work, through a plain blocking libpq connection by address; the PG*
// variables pg_virtualenv exports supply the rest. Header-only; needs libpq.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace handoff::testkit {

/// A test's own blocking libpq connection, to read what PostgreSQL says of the server.
class PgMonitor {
 public:
  explicit PgMonitor(const std::string& conninfo = "hostaddr=127.0.0.1 application_name=handoff-monitor")
      : c_(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(c_) != CONNECTION_OK) {
      const std::string why = PQerrorMessage(c_);
      PQfinish(c_);
      throw std::runtime_error("monitor: " + why);
    }
    value("SET client_min_messages = warning");  // no NOTICE for DROP DATABASE IF EXISTS
  }
  ~PgMonitor() { PQfinish(c_); }
  PgMonitor(const PgMonitor&) = delete;
  PgMonitor& operator=(const PgMonitor&) = delete;

  /// The first column of the first row ("" when there is none); throws on an error.
  std::string value(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    const auto st = PQresultStatus(r);
    std::string out = st == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
    std::string error = st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK ? "" : PQresultErrorMessage(r);
    PQclear(r);
    if (!error.empty()) throw std::runtime_error("monitor: " + sql + ": " + error);
    return out;
  }
  long number(const std::string& sql) { return std::stol(value(sql)); }

  void fresh_database(const std::string& db) {
    value("DROP DATABASE IF EXISTS " + db);
    value("CREATE DATABASE " + db);
  }

  /// pg_stat_database.sessions (PostgreSQL 14+) counts sessions established to `db`; a
  /// backend reports its own at its first idle moment or at exit, so the count is awaited
  /// (at most 20 s) until it reaches `expected`, then read again after 200 ms in case more
  /// arrive late.
  long sessions_when_settled(const std::string& db, long expected) {
    using namespace std::chrono_literals;
    const std::string sql = "SELECT sessions FROM pg_stat_database WHERE datname = '" + db + "'";
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline && number(sql) < expected) {
      std::this_thread::sleep_for(50ms);
    }
    std::this_thread::sleep_for(200ms);
    return number(sql);
  }

 private:
  PGconn* c_;
};

}  // namespace handoff::testkit
