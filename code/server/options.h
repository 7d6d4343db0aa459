// server/options: the core flags every stage binary takes (chapter 01).
// Role: one definition of --host --port --workers --dispatch --blocking-threads, the
// limits and the timeouts, so the harness can drive any stage with the same words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "evloop/event_loop.h"
#include "http/request_parser.h"

namespace handoff::server {

enum class Dispatch { inline_on_loop, pool };

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
  bool pool_all_routes = false;    ///< pool mode: routes that never block go to the pool too
  /// Set (chapter 04 on): each worker's loop is an evloop::EventLoop with these options, so
  /// callbacks, timers and coroutines run on it beside the connections. Unset: the plain
  /// reactor loop of chapters 01-03.
  std::optional<evloop::EventLoopOptions> event_loop;
};

/// Add the core flags to `app`, writing into `options`.
void add_core_flags(CLI::App& app, ServerOptions& options);

}  // namespace handoff::server
