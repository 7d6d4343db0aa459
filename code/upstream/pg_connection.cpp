// upstream/pg_connection: one PostgreSQL connection driven by libpq's asynchronous API on the
// event loop (chapter 04).
// Role: each libpq step runs when the loop reports the socket ready; see pg_connection.h.
#include "upstream/pg_connection.h"

#include <arpa/inet.h>
#include <libpq-fe.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <utility>

namespace handoff::upstream {

PgConnection::PgConnection(evloop::EventLoop& loop) : loop_(loop) {}

std::string PgConnection::try_connect_once(const std::string& conninfo, int timeout_s) {
  // Ours first, then the conninfo expanded from "dbname": a connect_timeout of its own wins.
  const std::string timeout = std::to_string(timeout_s);
  const char* keywords[] = {"connect_timeout", "dbname", nullptr};
  const char* values[] = {timeout.c_str(), conninfo.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  std::string why;
  if (conn == nullptr) {
    why = "libpq: out of memory";
  } else if (PQstatus(conn) != CONNECTION_OK) {
    why = PQerrorMessage(conn);
  }
  if (conn != nullptr) PQfinish(conn);
  // libpq's message may span lines (one per address tried, a hint): one line, as a log wants.
  std::string line;
  for (const char c : why) {
    const bool space = c == '\n' || c == '\t' || c == ' ';
    if (!space) {
      line += c;
    } else if (!line.empty() && line.back() != ' ') {
      line += ' ';
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

PgConnection::~PgConnection() {
  unwatch();
  if (conn_ != nullptr) PQfinish(conn_);  // non-blocking once connected: the Terminate message is not waited on
}

namespace {

using Options = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

Options parse(const std::string& conninfo) {
  char* error = nullptr;
  Options options(PQconninfoParse(conninfo.c_str(), &error), &PQconninfoFree);
  if (!options) {
    std::string why = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    throw std::invalid_argument("libpq cannot parse the conninfo: " + why);
  }
  return options;
}

// A keyword's value in the conninfo, else the environment variable libpq would read for it.
std::string value_of(const Options& options, const char* keyword, const char* env) {
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (std::string(o->keyword) == keyword && o->val != nullptr && *o->val != '\0') return o->val;
  }
  const char* from_env = std::getenv(env);
  return from_env != nullptr ? from_env : "";
}

bool is_address(const std::string& host) {
  in6_addr scratch{};
  return inet_pton(AF_INET, host.c_str(), &scratch) == 1 || inet_pton(AF_INET6, host.c_str(), &scratch) == 1;
}

// A value in libpq's keyword=value syntax: single-quoted, with ' and \ escaped.
std::string conninfo_value(const std::string& value) {
  std::string q = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') q += '\\';
    q += c;
  }
  return q + "'";
}

std::string numeric(const evloop::ResolvedAddress& a) {
  char text[INET6_ADDRSTRLEN] = {};
  const void* where = a.family == AF_INET6
                          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(&a.address)->sin6_addr)
                          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(&a.address)->sin_addr);
  return inet_ntop(a.family, where, text, sizeof text) != nullptr ? text : "";
}

}  // namespace

std::string PgConnection::host_to_resolve(const std::string& conninfo) {
  const Options options = parse(conninfo);
  if (!value_of(options, "hostaddr", "PGHOSTADDR").empty()) return {};
  const std::string host = value_of(options, "host", "PGHOST");
  if (host.empty() || host.front() == '/' || host.front() == '@' || host.find(',') != std::string::npos ||
      is_address(host)) {
    return {};
  }
  return host;
}

std::string PgConnection::with_addresses(const std::string& conninfo, const std::vector<std::string>& addresses) {
  // Every option the conninfo sets, rewritten as keyword=value (a URI too), then `host`
  // repeated once per address, as libpq pairs a hostaddr list with a host list of the same
  // length and tries them in order.
  const Options options = parse(conninfo);
  const std::string host = value_of(options, "host", "PGHOST");
  std::string out;
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    const std::string keyword = o->keyword;
    if (o->val == nullptr || keyword == "host" || keyword == "hostaddr") continue;
    out += keyword + "=" + conninfo_value(o->val) + " ";
  }
  std::string hosts, addrs;
  for (const std::string& a : addresses) {
    hosts += (hosts.empty() ? "" : ",") + host;
    addrs += (addrs.empty() ? "" : ",") + a;
  }
  return out + "host=" + conninfo_value(hosts) + " hostaddr=" + conninfo_value(addrs);
}

// [pg.resolve]
void PgConnection::connect(evloop::EventLoop& loop, const std::string& conninfo, Connected done,
                           evloop::Resolver* resolver) {
  std::string host;
  try {
    host = resolver != nullptr ? host_to_resolve(conninfo) : std::string();
  } catch (const std::invalid_argument&) {
    // Let libpq refuse it, with its own message, as it would without a resolver.
  }
  if (host.empty()) {
    start(loop, conninfo, std::move(done));
    return;
  }
  evloop::LookupRequest request{host, {}, AF_UNSPEC, SOCK_STREAM};
  resolver->resolve(std::move(request), [&loop, conninfo, host, done = std::move(done)](evloop::Resolution r) mutable {
    std::vector<std::string> addresses;
    for (const evloop::ResolvedAddress& a : r.addresses) {
      std::string text = numeric(a);
      if (!text.empty() && std::find(addresses.begin(), addresses.end(), text) == addresses.end()) {
        addresses.push_back(std::move(text));
      }
    }
    if (addresses.empty()) {
      const std::string why = r.error != 0 ? gai_strerror(r.error) : "no address";
      done(nullptr, "resolver: could not translate host name \"" + host + "\" to address: " + why);
      return;
    }
    start(loop, with_addresses(conninfo, addresses), std::move(done));
  });
}
// [pg.resolve]

void PgConnection::start(evloop::EventLoop& loop, const std::string& conninfo, Connected done) {
  std::unique_ptr<PgConnection> attempt(new PgConnection(loop));
  PgConnection* c = attempt.get();
  c->on_connected_ = std::move(done);
  c->self_ = std::move(attempt);
  c->conn_ = PQconnectStart(conninfo.c_str());
  if (c->conn_ == nullptr || PQstatus(c->conn_) == CONNECTION_BAD) {
    std::string why = c->conn_ != nullptr ? PQerrorMessage(c->conn_) : "libpq: out of memory";
    loop.call_soon([c, why] { c->end_connect(why); });
    return;
  }
  PQsetNoticeProcessor(c->conn_, &PgConnection::on_notice, c);
  // libpq's manual: after PQconnectStart, act as if PQconnectPoll had said "writing".
  c->fd_ = PQsocket(c->conn_);
  loop.add_writer(c->fd_, [c] { c->connect_step(); });
}

void PgConnection::connect_step() {
  // libpq may close the socket and open another (the next address of a host) inside
  // PQconnectPoll, so the watch is dropped before each step and set again after it.
  unwatch();
  switch (PQconnectPoll(conn_)) {
    case PGRES_POLLING_READING:
      fd_ = PQsocket(conn_);
      loop_.add_reader(fd_, [this] { connect_step(); });
      return;
    case PGRES_POLLING_WRITING:
      fd_ = PQsocket(conn_);
      loop_.add_writer(fd_, [this] { connect_step(); });
      return;
    case PGRES_POLLING_OK:
      if (PQsetnonblocking(conn_, 1) != 0) {
        end_connect(PQerrorMessage(conn_));
        return;
      }
      fd_ = PQsocket(conn_);
      loop_.add_reader(fd_, [this] { on_readable(); });  // for the connection's life
      end_connect({});
      return;
    default:
      end_connect(PQerrorMessage(conn_));
      return;
  }
}

void PgConnection::end_connect(std::string error) {
  Connected done = std::move(on_connected_);
  std::unique_ptr<PgConnection> self = std::move(self_);
  if (!error.empty()) {
    self.reset();  // closes: `this` is gone
    done(nullptr, std::move(error));
    return;
  }
  done(std::move(self), {});
}

// [pg.query]
void PgConnection::query(const std::string& sql, const std::vector<std::string>& params, QueryDone done) {
  std::string refused = on_done_ ? "a query is already in flight on this connection" : broken_reason_;
  if (refused.empty()) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p.c_str());
    if (PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr,
                          0) == 1) {
      on_done_ = std::move(done);
      result_ = {};
      last_notice_.clear();
      flush();  // a failure here fails the query through fail_query, which defers `done`
      return;
    }
    refused = PQerrorMessage(conn_);
    if (PQstatus(conn_) == CONNECTION_BAD) mark_broken(refused);
  }
  fail_later(std::move(done), std::move(refused));
}

// Send what libpq has buffered; watch for writability only while some is left.
bool PgConnection::flush() {
  const int left = PQflush(conn_);
  if (left < 0) {
    mark_broken(PQerrorMessage(conn_));
    return false;
  }
  const bool want = left == 1;
  if (want != writer_) {
    if (want) {
      loop_.add_writer(fd_, [this] { flush(); });
    } else {
      loop_.remove_writer(fd_);
    }
    writer_ = want;
  }
  return true;
}
// [pg.query]

// [pg.read]
void PgConnection::on_readable() {
  const bool read = PQconsumeInput(conn_) == 1;
  // Idle, and the server spoke unasked: PQconsumeInput only buffers, PQisBusy parses (without
  // waiting), handing an error (the server's reason before it closes) to on_notice.
  if (!on_done_) PQisBusy(conn_);
  if (!read) {
    mark_broken(PQerrorMessage(conn_));
    return;
  }
  if (on_done_) {
    if (writer_ && !flush()) return;  // libpq's manual: after reading, flush again
    collect();
    return;
  }
  if (PQstatus(conn_) == CONNECTION_BAD) mark_broken(PQerrorMessage(conn_));
}

void PgConnection::collect() {
  while (PQisBusy(conn_) == 0) {  // PQgetResult will not wait
    PGresult* r = PQgetResult(conn_);
    if (r == nullptr) {
      finish_query();
      return;
    }
    absorb(r);
    PQclear(r);
  }
}
// [pg.read]

void PgConnection::absorb(const PGresult* r) {
  switch (PQresultStatus(r)) {
    case PGRES_TUPLES_OK: {
      const int ncols = PQnfields(r);
      const int nrows = PQntuples(r);
      result_.columns.clear();
      for (int c = 0; c < ncols; ++c) result_.columns.emplace_back(PQfname(r, c));
      for (int i = 0; i < nrows; ++i) {
        auto& row = result_.rows.emplace_back();
        for (int c = 0; c < ncols; ++c) row.emplace_back(PQgetvalue(r, i, c), PQgetlength(r, i, c));
      }
      return;
    }
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY:
      return;
    default:
      if (result_.error.empty()) result_.error = PQresultErrorMessage(r);
      return;
  }
}

void PgConnection::finish_query() {
  QueryDone done = std::move(on_done_);
  on_done_ = nullptr;
  PgResult r = std::move(result_);
  result_ = {};
  done(std::move(r));  // may destroy `this` (a pool closing it): nothing after
}

void PgConnection::fail_query(std::string error) {
  QueryDone done = std::move(on_done_);
  on_done_ = nullptr;
  result_ = {};
  fail_later(std::move(done), std::move(error));
}

// A callback of its own, so that a failure found inside query() still reports after query()
// returns, and so that no caller of mark_broken has `this` destroyed under it.
void PgConnection::fail_later(QueryDone done, std::string error) {
  loop_.call_soon([done = std::move(done), error = std::move(error)] {
    PgResult r;
    r.error = error;
    done(std::move(r));
  });
}

void PgConnection::mark_broken(std::string why) {
  if (why.empty()) why = "connection lost";
  broken_reason_ = last_notice_ + why;  // the server's last word (its FATAL) first, when it said one
  unwatch();                            // libpq may already have closed the socket
  if (on_done_) fail_query(broken_reason_);
}

void PgConnection::unwatch() {
  if (fd_ < 0) return;
  loop_.remove_reader(fd_);
  loop_.remove_writer(fd_);
  fd_ = -1;
  writer_ = false;
}

void PgConnection::on_notice(void* self, const char* message) {
  static_cast<PgConnection*>(self)->last_notice_ = message;
}

bool PgConnection::usable() const noexcept {
  return conn_ != nullptr && !on_done_ && broken_reason_.empty() && PQstatus(conn_) == CONNECTION_OK;
}

int PgConnection::backend_pid() const noexcept { return conn_ != nullptr ? PQbackendPID(conn_) : 0; }

bool PgConnection::nonblocking() const noexcept { return conn_ != nullptr && PQisnonblocking(conn_) == 1; }

}  // namespace handoff::upstream
