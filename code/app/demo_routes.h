// app/demo_routes: the handlers every stage serves and every benchmark drives (chapter 01).
// Changed in chapters 04, 06: the coroutine routes (04), GET /metrics (06).
// Role: a trivial view, a JSON view, an echo, a view that holds its thread, one that burns
// CPU, a paced chunked stream, and /stats, the server's own per-thread instrument.
#pragma once

#include <string_view>

#include "app/router.h"
#include "stats/thread_stats.h"

namespace handoff::app {

/// A query parameter as a number clamped to [0, max]; `fallback` when absent or bad.
long query_number(const http::Request& req, std::string_view name, long fallback, long max);

/// GET /            "Hello, World!"
/// GET /json        a small JSON object
/// POST /echo       the request body back
/// GET /sleep?ms=N  holds its thread N ms (at most 30 000)
/// GET /cpu?us=N    burns N µs of CPU (at most 1 000 000)
/// GET /stream?chunks=N&ms=M  N chunks (at most 10 000), M ms apart (at most 10 000)
/// GET /stats       JSON: every thread's CPU, requests and hand-off counters
void add_demo_routes(Router& router, const stats::Registry& registry);

/// Coroutine routes (chapter 04; only for a server whose workers run an event loop):
/// GET /async/work?us=N   /cpu's work, co_awaited on the worker's pool (run_in_executor);
///                        503 without a pool (--dispatch inline)
/// GET /async/sleep?ms=N  /sleep's answer after a timer on the loop (at most 30 000)
void add_async_demo_routes(Router& router);

/// Chapter 06: GET /metrics, the figures of /stats in Prometheus's text exposition format
/// (stats/prometheus), for a fleet's monitoring to scrape. Never blocks: it runs on the loop.
void add_metrics_route(Router& router, const stats::Registry& registry);

}  // namespace handoff::app
