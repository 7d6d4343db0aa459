// server/options: the core flags every stage binary takes (chapter 01).
// Changed in chapters 05, 06: the topology and stack flags (05), the budgets' flags (06).
#include "server/options.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>

#include "config/bounds.h"
#include "config/choice.h"

namespace handoff::server {

namespace {
const std::map<std::string, Topology> kTopologies{{"shard", Topology::shard}, {"pool", Topology::pool}};
const std::map<std::string, StackPlacement> kStacks{{"shared", StackPlacement::shared},
                                                    {"per-worker", StackPlacement::per_worker}};
}  // namespace

void add_core_flags(CLI::App& app, ServerOptions& o) {
  app.add_option("--host", o.host, "IPv4 address to listen on")->capture_default_str();
  app.add_option("--port", o.port, "TCP port (0 picks a free one)")->check(config::integer_in(0, 65535))->capture_default_str();
  app.add_option("--workers", o.workers, "event-loop threads (SO_REUSEPORT listeners)")
      ->check(config::integer_in(1, 64))
      ->capture_default_str();
  const std::map<std::string, Dispatch> dispatch{{"inline", Dispatch::inline_on_loop}, {"pool", Dispatch::pool}};
  config::add_choice(app, "--dispatch", o.dispatch, dispatch, "where handlers run: inline (on the loop) or pool");
  app.add_option("--blocking-threads", o.blocking_threads, "handler threads per worker (dispatch=pool)")
      ->check(config::integer_in(1, 256))
      ->capture_default_str();
  app.add_flag("--stats", o.print_stats, "print per-thread CPU per request at exit");
  // The limits' ranges: below them no request fits; above them one connection could hold
  // more memory than the machine is likely to have (README, "Memory").
  app.add_option("--max-request-line", o.limits.max_request_line, "bytes, else 414")
      ->check(config::integer_in(16, 1 << 20))
      ->capture_default_str();
  app.add_option("--max-header-bytes", o.limits.max_header_bytes, "bytes, else 431")
      ->check(config::integer_in(64, 16 << 20))
      ->capture_default_str();
  app.add_option("--max-header-fields", o.limits.max_header_fields, "fields, else 431")
      ->check(config::integer_in(1, 10'000))
      ->capture_default_str();
  app.add_option("--max-body", o.limits.max_body_bytes, "bytes, else 413")
      ->check(config::integer_in(0, 1LL << 30))
      ->capture_default_str();
  app.add_option("--header-timeout-ms", o.header_timeout_ms, "a request head must arrive within this")
      ->check(config::integer_in(1, 3'600'000))
      ->capture_default_str();
  app.add_option("--idle-timeout-ms", o.idle_timeout_ms, "idle keep-alive connections close after this")
      ->check(config::integer_in(1, 86'400'000))
      ->capture_default_str();
  app.add_option("--drain-timeout-ms", o.drain_timeout_ms, "shutdown waits at most this for in-flight work")
      ->check(config::integer_in(0, 3'600'000))
      ->capture_default_str();
  app.add_option("--max-pipeline", o.max_pipeline, "requests in flight per connection before reading pauses")
      ->check(config::integer_in(1, 4096))
      ->capture_default_str();
  app.add_option("--read-ahead-bytes", o.read_ahead_bytes,
                 "bytes of input a connection reads ahead of the requests it has taken (one read; it reads "
                 "again once they are parsed and dispatched), in bytes; default 65536")
      ->check(config::integer_in(512, 64 * 1024))
      ->capture_default_str();
  app.add_option("--max-unsent-bytes", o.max_unsent_bytes,
                 "bytes of answers a connection holds unwritten (its client not reading) before it stops "
                 "reading and dispatching, and a streaming handler waits; default 1048576")
      ->check(config::integer_in(4096, 1LL << 30))
      ->capture_default_str();
  app.add_option("--body-timeout-ms", o.body_timeout_ms,
                 "a request body must arrive within this many ms of its head's end, plus 1 s per "
                 "--body-min-rate bytes received, else 408; default 20000")
      ->check(config::integer_in(1, 3'600'000))
      ->capture_default_str();
  app.add_option("--body-min-rate", o.body_min_rate,
                 "bytes per second a slow body must keep up: each this many bytes received extend "
                 "--body-timeout-ms by 1 s (0: a fixed whole-body deadline); default 500")
      ->check(config::integer_in(0, 1'000'000'000))
      ->capture_default_str();
  app.add_flag("--pool-all-routes", o.pool_all_routes,
               "dispatch=pool: hand routes that never block to the pool too (to price the hand-off)");
}

void add_topology_flags(CLI::App& app, ServerOptions& o) {
  config::add_choice(app, "--topology", o.topology, kTopologies,
                 "how connections reach the workers: shard (a SO_REUSEPORT listener per worker) or pool (one "
                 "acceptor hands each socket to worker i++ % W: seed 004's shape)");
  config::add_choice(app, "--stack", o.stack, kStacks,
                 "Onload stacks: shared (where Onload puts the sockets) or per-worker (a thread-scope stack per "
                 "worker, each adopted socket moved into it before its first read; does nothing without "
                 "Onload)");
}

void add_stack_model_flags(CLI::App& app, ServerOptions& o) {
  stack::StackLockOptions& lock = o.stack_model.emplace().lock;
  app.add_option_function<std::int64_t>(
         "--stack-buzz-us", [&lock](std::int64_t us) { lock.buzz_ns = stack::buzz_ns_from_us(us); },
         "how long a thread spins on a held stack lock before it sleeps, in µs (-1: for ever; Onload's "
         "EF_BUZZ_USEC)")
      ->check(config::integer_in(-1, 10'000'000))
      ->default_str("100");
  app.add_option_function<std::int64_t>(
         "--stack-handoff-us", [&lock](std::int64_t us) { lock.handoff_after_ns = us * 1000; },
         "hand the stack lock straight to a waiter that has slept this long, in µs (0: never, as Onload's "
         "lock)")
      ->check(config::integer_in(0, 10'000'000))
      ->default_str("0");
}

}  // namespace handoff::server
