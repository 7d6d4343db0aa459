// server/options: the core flags every stage binary takes (chapter 01).
// Changed in chapters 04, 05, 06: the event loop (04), topology and stack (05), the budgets (06).
// Role: one definition of --host --port --workers --dispatch --blocking-threads, the
// limits and the timeouts, so the harness can drive any stage with the same words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>


#include "app/coroutine_handler.h"
#include "evloop/event_loop.h"
#include "http/request_parser.h"
#include "pool/job.h"
#include "stack/network_stack.h"

namespace CLI {
class App;  // CLI11's parser; the flags' .cpp includes CLI11 itself
}

namespace handoff::server {

enum class Dispatch { inline_on_loop, pool };

/// How accepted connections reach the workers (chapter 05).
enum class Topology {
  /// A listener per worker on the shared port (SO_REUSEPORT): the kernel spreads the
  /// connections, and each worker accepts its own. What every stage did before chapter 05.
  shard,
  /// One listener, accepted by the first worker's loop, which hands each accepted socket to
  /// worker (i++ % W) through that worker's thread-safe post (seed 004's pool shape).
  pool,
};

/// Which Onload stack a worker's sockets live in (chapter 05). Acts only under Onload.
enum class StackPlacement {
  /// Wherever Onload puts them: in the pool topology, the listener's one stack, which
  /// every worker then drives (seed 004's "before").
  shared,
  /// A thread-scope stack per worker ("w0", "w1", ...): each adopted socket is moved into
  /// it before its first read (seed 004's fix). Without Onload it does nothing and says so.
  per_worker,
};

/// Everything a stage's flags set on its server.
struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  int workers = 1;  ///< event-loop threads, each with its own listener and pool
  Dispatch dispatch = Dispatch::inline_on_loop;
  int blocking_threads = 1;  ///< pool threads per worker (dispatch = pool)
  bool print_stats = false;  ///< per-thread CPU summary on exit
  http::Limits limits;
  int header_timeout_ms = 10'000;  ///< a request head must arrive within this
  int idle_timeout_ms = 60'000;    ///< an idle keep-alive connection closes after this
  int drain_timeout_ms = 10'000;   ///< graceful shutdown waits at most this for in-flight work
  int max_pipeline = 64;           ///< requests in flight per connection before reading pauses
  /// Chapter 06: bytes of input a connection reads ahead of the requests it has taken
  /// (one read at most; it reads again only once the parser has taken them all).
  int read_ahead_bytes = 64 * 1024;
  /// Chapter 06: answers a connection holds unwritten before it stops dispatching and
  /// reading, and a streaming handler waits (pool::JobTicket::unsent_budget).
  std::int64_t max_unsent_bytes = pool::JobTicket::kUnsentBudget;
  /// Chapter 06: a request body must arrive within this from the end of its head, plus
  /// one second for every body_min_rate bytes received (Apache mod_reqtimeout's
  /// body=20,MinRate=500), else 408.
  int body_timeout_ms = 20'000;
  int body_min_rate = 500;  ///< bytes per second that extend the body's deadline (0: none)
  bool pool_all_routes = false;    ///< pool mode: routes that never block go to the pool too
  /// Set (chapter 04 on): each worker's loop is an evloop::EventLoop with these options, so
  /// callbacks, timers and coroutines run on it beside the connections. Unset: the plain
  /// reactor loop of chapters 01-03.
  std::optional<evloop::EventLoopOptions> event_loop;
  /// Set (chapter 04 on, with event_loop): makes each worker's services (an upstream pool)
  /// for its coroutine handlers (app::CoroutineContext::services). Unset: none.
  app::WorkerServicesFactory worker_services;
  /// Chapter 05: shard (default: a listener per worker, as before) or pool (one acceptor
  /// handing sockets to the workers; needs event_loop, through which they are handed).
  Topology topology = Topology::shard;
  /// Chapter 05: shared (default) or per_worker Onload stacks.
  StackPlacement stack = StackPlacement::shared;
  /// Chapter 05: send every response through a model of a user-level stack (code/stack/)
  /// with these options. Which stack: one for all workers in the pool topology with
  /// stack = shared (seed 004's shape: every accepted socket in the listener's stack), else
  /// one per worker (a shard's own listener stack, or the per-worker fix). Unset (stages
  /// 01-04): sendmsg(2) straight to the kernel.
  std::optional<stack::NetworkStackOptions> stack_model;
};

/// Add the core flags to `app`, writing into `options`.
void add_core_flags(CLI::App& app, ServerOptions& options);

/// Chapter 05's switches: --topology shard|pool (default shard) and --stack
/// shared|per-worker (default shared), writing into `options`.
void add_topology_flags(CLI::App& app, ServerOptions& options);

/// Chapter 05's stack model, switched on (options.stack_model), with its lock's switches:
/// --stack-buzz-us N (spin on a held lock for N µs before sleeping; -1: for ever; default
/// 100, Onload's latency profile) and --stack-handoff-us N (hand the lock to a waiter that
/// has slept N µs; 0, the default: never, as Onload's lock). Call before parsing; `options`
/// must stay where it is until then.
void add_stack_model_flags(CLI::App& app, ServerOptions& options);

}  // namespace handoff::server
