// upstream/tests/pg_test: PgConnection and QueuePool against a real PostgreSQL (chapter 04).
// Role: run by with_postgres.sh inside a throwaway cluster from pg_virtualenv (password login
// over TCP, so every new connection is a SCRAM login). Checks connect and queries on the loop
// with no blocking wait in libpq, the pool's bound under a burst of 50 checkouts, the
// server's own count of new sessions against the pool's `opened`, seed 003's churn in
// miniature, a server-side disconnect surfacing as an error, and a host name looked up on the
// loop's bounded resolver rather than by libpq.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <libpq-fe.h>
#include <poll.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "evloop/event_loop.h"
#include "testkit/pg_monitor.h"
#include "testkit/watchdog.h"
#include "upstream/pg_connection.h"
#include "upstream/queue_pool.h"

using namespace std::chrono_literals;
using handoff::evloop::EventLoop;
using handoff::testkit::Watchdog;
using handoff::upstream::PgConnection;
using handoff::upstream::PgResult;
using handoff::upstream::QueuePool;
using handoff::upstream::QueuePoolOptions;

namespace {

// Every poll(2) in the process, libpq's included: libpq waits for its socket only in
// pqSocketPoll, through poll(2), so a count that stays put shows that no libpq call waited.
// This definition in the executable comes first in the dynamic linker's lookup, ahead of
// libc's, for libpq's calls too.
std::atomic<long> g_polls{0};

}  // namespace

extern "C" int poll(struct pollfd* fds, nfds_t nfds, int timeout) {
  g_polls.fetch_add(1, std::memory_order_relaxed);  // relaxed: a count read later on this thread
  using Poll = int (*)(struct pollfd*, nfds_t, int);
  static const Poll real = reinterpret_cast<Poll>(dlsym(RTLD_NEXT, "poll"));
  return real(fds, nfds, timeout);
}

namespace {

// By address, so that libpq resolves no name (pg_virtualenv's PGHOST is "localhost");
// the rest (port, user, password, database) comes from pg_virtualenv's PG* variables.
std::string conninfo(const std::string& app, const std::string& db = {}) {
  std::string s = "hostaddr=127.0.0.1 application_name=" + app;
  if (!db.empty()) s += " dbname=" + db;
  return s;
}

using Monitor = handoff::testkit::PgMonitor;

using Pool = QueuePool<PgConnection>;

QueuePoolOptions opts(std::size_t size, std::size_t overflow) {
  QueuePoolOptions o;
  o.pool_size = size;
  o.max_overflow = overflow;
  o.timeout = 30s;
  return o;
}

Pool::Connector connector(EventLoop& loop, std::string info) {
  return [&loop, info](Pool::Served served) { PgConnection::connect(loop, info, std::move(served)); };
}

std::unique_ptr<PgConnection> connect_on(EventLoop& loop, const std::string& info) {
  std::unique_ptr<PgConnection> conn;
  std::string error;
  bool done = false;
  PgConnection::connect(loop, info, [&](std::unique_ptr<PgConnection> c, std::string e) {
    conn = std::move(c);
    error = std::move(e);
    done = true;
  });
  CHECK_FALSE(done);  // never before connect() returns
  loop.run_until([&] { return done; });
  INFO(error);
  REQUIRE(conn);
  return conn;
}

}  // namespace

TEST_CASE(
    "pg connection: connects on the loop and runs two queries, one with parameters, with no blocking wait in "
    "libpq",
    "[pg_connection][ch04]") {
  Watchdog dog(30s, "pg connect and two queries");
  EventLoop loop;
  const long polls_before = g_polls.load(std::memory_order_relaxed);
  auto conn = connect_on(loop, conninfo("handoff-test"));
  CHECK(conn->usable());
  CHECK(conn->nonblocking());
  CHECK(conn->backend_pid() > 0);

  std::vector<PgResult> results;
  conn->query("SELECT 1 + 1 AS two", {}, [&](PgResult r) {
    results.push_back(std::move(r));
    conn->query("SELECT $1::int * 3 AS x, NULL::text AS nothing, current_setting('application_name') AS app", {"14"},
                [&](PgResult r2) { results.push_back(std::move(r2)); });
  });
  CHECK_FALSE(conn->usable());  // a query in flight
  loop.run_until([&] { return results.size() == 2; });
  REQUIRE(results[0].ok());
  CHECK(results[0].columns == std::vector<std::string>{"two"});
  CHECK(results[0].rows == std::vector<std::vector<std::string>>{{"2"}});
  REQUIRE(results[1].ok());
  CHECK(results[1].columns == std::vector<std::string>{"x", "nothing", "app"});
  CHECK(results[1].rows == std::vector<std::vector<std::string>>{{"42", "", "handoff-test"}});

  // An SQL error is the query's error; the connection stays usable.
  PgResult bad;
  bool got = false;
  conn->query("SELECT 1 / 0", {}, [&](PgResult r) {
    bad = std::move(r);
    got = true;
  });
  loop.run_until([&] { return got; });
  CHECK(bad.error.find("division by zero") != std::string::npos);
  CHECK(conn->usable());
  CHECK(g_polls.load(std::memory_order_relaxed) == polls_before);  // libpq never waited
}

TEST_CASE("pg connection: the poll(2) count sees libpq's blocking waits, so its standing still above means something",
          "[pg_connection][ch04]") {
  const long before = g_polls.load(std::memory_order_relaxed);
  Monitor m;  // PQconnectdb and PQexec wait in pqSocketPoll
  CHECK(m.value("SELECT 1") == "1");
  CHECK(g_polls.load(std::memory_order_relaxed) > before);
}

TEST_CASE("pg connection: a refused login is surfaced as the connect's error", "[pg_connection][ch04]") {
  Watchdog dog(30s, "pg refused login");
  EventLoop loop;
  std::string error;
  bool done = false;
  PgConnection::connect(loop, conninfo("handoff-test") + " password=wrong", [&](auto c, std::string e) {
    CHECK_FALSE(c);
    error = std::move(e);
    done = true;
  });
  loop.run_until([&] { return done; });
  CHECK(error.find("password authentication failed") != std::string::npos);
}

TEST_CASE(
    "pg connection: a backend the server terminates fails the query in flight, and an idle one fails its next "
    "query, as errors, not hangs",
    "[pg_connection][ch04]") {
  Watchdog dog(30s, "pg terminate backend");
  EventLoop loop;
  auto busy = connect_on(loop, conninfo("handoff-test"));
  auto idle = connect_on(loop, conninfo("handoff-test"));
  PgResult in_flight;
  bool got = false;
  busy->query("SELECT pg_sleep(60)", {}, [&](PgResult r) {
    in_flight = std::move(r);
    got = true;
  });
  Monitor m;
  for (int pid : {busy->backend_pid(), idle->backend_pid()}) {
    CHECK(m.value("SELECT pg_terminate_backend(" + std::to_string(pid) + ")") == "t");
  }
  loop.run_until([&] { return got && idle->broken(); });  // the idle one notices by itself
  CHECK(in_flight.error.find("terminating connection") != std::string::npos);
  CHECK_FALSE(busy->usable());
  INFO(idle->broken_reason());
  CHECK(idle->broken_reason().find("terminating connection") != std::string::npos);

  PgResult next;
  got = false;
  idle->query("SELECT 1", {}, [&](PgResult r) {
    next = std::move(r);
    got = true;
  });
  loop.run_until([&] { return got; });
  CHECK(next.error == idle->broken_reason());
}

TEST_CASE(
    "queue pool on postgres: a burst of 50 checkouts through 4 + 2 never holds more than 6 sessions, and the "
    "server counts as many new sessions as the pool opened",
    "[queue_pool][ch04]") {
  Watchdog dog(60s, "pg pool burst");
  Monitor m;
  m.fresh_database("burst");
  EventLoop loop;
  long most_seen = 0;
  int finished = 0;
  std::vector<std::string> errors;
  handoff::upstream::QueuePoolCounts counts;
  {
    Pool pool(loop, connector(loop, conninfo("handoff-burst", "burst")), opts(4, 2));
    for (int i = 0; i < 50; ++i) {
      pool.checkout([&](Pool::ConnPtr c, std::string error) {
        if (!c) {
          errors.push_back(error);
          ++finished;
          return;
        }
        PgConnection* p = c.release();  // back in the pool when its query is done
        p->query("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'handoff-burst'", {},
                 [&, p](PgResult r) {
                   if (r.ok()) {
                     most_seen = std::max(most_seen, std::stol(r.rows.at(0).at(0)));
                   } else {
                     errors.push_back(r.error);
                   }
                   pool.checkin(Pool::ConnPtr(p));
                   ++finished;
                 });
      });
    }
    CHECK(pool.counts().waits == 44);  // six opening, the rest in line
    const long polls_before = g_polls.load(std::memory_order_relaxed);
    loop.run_until([&] { return finished == 50; });
    CHECK(g_polls.load(std::memory_order_relaxed) == polls_before);  // no libpq call waited
    counts = pool.counts();
  }  // the pool closes its idle connections
  CHECK(errors.empty());
  CHECK(counts.checkouts == 50);
  CHECK(counts.peak_open == 6);
  CHECK(counts.timeouts == 0);
  // A connection the pool closed may still show while its backend exits.
  CHECK(most_seen >= 1);
  CHECK(most_seen <= static_cast<long>(6 + counts.closed_on_checkin));
  CHECK(m.sessions_when_settled("burst", static_cast<long>(counts.opened)) == static_cast<long>(counts.opened));
}

TEST_CASE(
    "queue pool on postgres: six connections checked in in one turn close two, the next six checkouts log in "
    "twice more, and the server counts eight sessions",
    "[queue_pool][ch04]") {
  Watchdog dog(60s, "pg pool churn");
  Monitor m;
  m.fresh_database("churn");
  EventLoop loop;
  std::vector<Pool::ConnPtr> held;
  {
    Pool pool(loop, connector(loop, conninfo("handoff-churn", "churn")), opts(4, 2));
    auto take = [&](int n) {
      for (int i = 0; i < n; ++i) {
        pool.checkout([&](Pool::ConnPtr c, std::string error) {
          INFO(error);
          REQUIRE(c);
          held.push_back(std::move(c));
        });
      }
      if (held.size() < 6) loop.run_until([&] { return held.size() == 6; });
    };
    take(6);
    loop.call_soon([&] {
      for (auto& c : held) pool.checkin(std::move(c));
      held.clear();
    });
    loop.run_until([] { return true; });
    CHECK(pool.counts().closed_on_checkin == 2);
    take(6);
    CHECK(pool.counts().opened == 8);
    for (auto& c : held) pool.checkin(std::move(c));
    held.clear();
  }
  CHECK(m.sessions_when_settled("churn", 8) == 8);
}

namespace {

// A stand-in lookup that knows one made-up name (".invalid" never resolves in DNS, RFC 6761)
// as the loopback address, and counts what it is asked.
constexpr const char* kMadeUpName = "pg.handoff.invalid";
std::atomic<int> g_lookups{0};

handoff::evloop::Resolution made_up_lookup(const handoff::evloop::LookupRequest& request) {
  g_lookups.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the callback ran on the loop
  handoff::evloop::Resolution r;
  if (request.host != kMadeUpName) {
    r.error = EAI_NONAME;
    return r;
  }
  handoff::evloop::ResolvedAddress a;
  auto* in = reinterpret_cast<sockaddr_in*>(&a.address);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.family = AF_INET;
  a.socktype = SOCK_STREAM;
  a.length = sizeof(sockaddr_in);
  r.addresses = {a, a};  // twice, as getaddrinfo may list one address per protocol
  return r;
}

std::pair<std::unique_ptr<PgConnection>, std::string> try_connect(EventLoop& loop, const std::string& info,
                                                                  handoff::evloop::Resolver* resolver) {
  std::unique_ptr<PgConnection> conn;
  std::string error;
  bool done = false;
  PgConnection::connect(
      loop, info,
      [&](std::unique_ptr<PgConnection> c, std::string e) {
        conn = std::move(c);
        error = std::move(e);
        done = true;
      },
      resolver);
  loop.run_until([&] { return done; });
  return {std::move(conn), std::move(error)};
}

}  // namespace

TEST_CASE(
    "pg connection: a host name is looked up on the loop's resolver, not by libpq: a name only the resolver "
    "knows connects, and an unknown one fails with the resolver's reason",
    "[pg_connection][ch04]") {
  Watchdog dog(30s, "pg connect by name");
  EventLoop loop;
  handoff::evloop::ResolverOptions o;
  o.lookup = made_up_lookup;
  handoff::evloop::Resolver resolver(loop, o);
  // No DNS knows the name (and none is asked: libpq alone would ask it, blocking the loop, and
  // fail), so a connect that succeeds went through the resolver, as the count says too.
  const std::string info = std::string("host=") + kMadeUpName + " application_name=handoff-by-name";
  g_lookups = 0;
  const long polls_before = g_polls.load(std::memory_order_relaxed);
  auto [conn, error] = try_connect(loop, info, &resolver);
  INFO(error);
  REQUIRE(conn);
  CHECK(g_lookups.load(std::memory_order_relaxed) == 1);
  CHECK(resolver.counts().lookups_run == 1);
  CHECK(g_polls.load(std::memory_order_relaxed) == polls_before);  // libpq never waited
  PgResult r;
  bool got = false;
  conn->query("SELECT current_setting('application_name')", {}, [&](PgResult x) {
    r = std::move(x);
    got = true;
  });
  loop.run_until([&] { return got; });
  CHECK(r.rows == std::vector<std::vector<std::string>>{{"handoff-by-name"}});

  // A name the lookup does not know fails the connect with the lookup's reason.
  auto [failed, reason] = try_connect(loop, "host=nowhere.handoff.invalid", &resolver);
  CHECK_FALSE(failed);
  CHECK(reason.rfind("resolver: could not translate host name \"nowhere.handoff.invalid\"", 0) == 0);
}

TEST_CASE(
    "pg connection: only a single host name is looked up, and the rewritten conninfo keeps every option, the "
    "name as host and the addresses as hostaddr",
    "[pg_connection][ch04]") {
  CHECK(PgConnection::host_to_resolve("host=db.example port=5433") == "db.example");
  CHECK(PgConnection::host_to_resolve("postgresql://u@db.example:5433/x") == "db.example");
  CHECK(PgConnection::host_to_resolve("host=db.example hostaddr=10.0.0.1").empty());  // an address is given
  CHECK(PgConnection::host_to_resolve("host=/var/run/postgresql").empty());           // a socket directory
  CHECK(PgConnection::host_to_resolve("host=127.0.0.1").empty());                     // already an address
  CHECK(PgConnection::host_to_resolve("host=::1").empty());
  CHECK(PgConnection::host_to_resolve("host=a.example,b.example").empty());  // a list: left to libpq
  CHECK_THROWS_AS(PgConnection::host_to_resolve("host='unterminated"), std::invalid_argument);

  const std::string rewritten =
      PgConnection::with_addresses("postgresql://u@db.example:5433/x?application_name=it's", {"10.0.0.1", "::1"});
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(rewritten.c_str(), &err);
  INFO(rewritten);
  REQUIRE(opts != nullptr);
  std::map<std::string, std::string> got;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val != nullptr) got[o->keyword] = o->val;
  }
  PQconninfoFree(opts);
  CHECK(got["host"] == "db.example,db.example");
  CHECK(got["hostaddr"] == "10.0.0.1,::1");
  CHECK(got["port"] == "5433");
  CHECK(got["user"] == "u");
  CHECK(got["dbname"] == "x");
  CHECK(got["application_name"] == "it's");
}
