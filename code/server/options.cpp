// server/options: the core flags every stage binary takes (chapter 01).
#include "server/options.h"

#include <map>

namespace handoff::server {

void add_core_flags(CLI::App& app, ServerOptions& o) {
  app.add_option("--host", o.host, "IPv4 address to listen on")->capture_default_str();
  app.add_option("--port", o.port, "TCP port (0 picks a free one)")->capture_default_str();
  app.add_option("--workers", o.workers, "event-loop threads (SO_REUSEPORT listeners)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  const std::map<std::string, Dispatch> dispatch{{"inline", Dispatch::inline_on_loop}, {"pool", Dispatch::pool}};
  app.add_option("--dispatch", o.dispatch, "where handlers run: inline (on the loop) or pool")
      ->transform(CLI::CheckedTransformer(dispatch, CLI::ignore_case))
      ->default_str("inline");
  app.add_option("--blocking-threads", o.blocking_threads, "handler threads per worker (dispatch=pool)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_flag("--stats", o.print_stats, "print per-thread CPU per request at exit");
  app.add_option("--max-request-line", o.limits.max_request_line, "bytes, else 414")->capture_default_str();
  app.add_option("--max-header-bytes", o.limits.max_header_bytes, "bytes, else 431")->capture_default_str();
  app.add_option("--max-header-fields", o.limits.max_header_fields, "fields, else 431")->capture_default_str();
  app.add_option("--max-body", o.limits.max_body_bytes, "bytes, else 413")->capture_default_str();
  app.add_option("--header-timeout-ms", o.header_timeout_ms, "a request head must arrive within this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--idle-timeout-ms", o.idle_timeout_ms, "idle keep-alive connections close after this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--drain-timeout-ms", o.drain_timeout_ms, "shutdown waits at most this for in-flight work")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--max-pipeline", o.max_pipeline, "requests in flight per connection before reading pauses")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_flag("--pool-all-routes", o.pool_all_routes,
               "dispatch=pool: hand routes that never block to the pool too (to price the hand-off)");
}

}  // namespace handoff::server
