// app/demo_routes: the handlers every stage serves and every benchmark drives (chapter 01).
// Changed in chapters 04, 06: the coroutine routes (04), GET /metrics (06).
#include "app/demo_routes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "evloop/awaitables.h"
#include "evloop/executor.h"
#include "stats/prometheus.h"
#include "stats/thread_cpu.h"

namespace handoff::app {

long query_number(const http::Request& req, std::string_view name, long fallback, long max) {
  const std::string_view text = req.query(name);
  long v = fallback;
  if (!text.empty()) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || p != text.data() + text.size()) v = fallback;
  }
  return std::clamp(v, 0L, max);
}

namespace {

http::Response text(std::string body, std::string type = "text/plain") {
  http::Response r;
  r.content_type = std::move(type);
  r.body = std::move(body);
  return r;
}

/// /cpu's work, and /async/work's on an executor: burn `us` µs of this thread's CPU.
std::string burn_cpu(long us) {
  const std::int64_t until = stats::thread_cpu_ns() + us * 1000;
  std::uint64_t spins = 0;
  while (stats::thread_cpu_ns() < until) ++spins;
  return "burned " + std::to_string(us) + " us in " + std::to_string(spins) + " clock reads";
}

std::string slept(long ms) { return "slept " + std::to_string(ms) + " ms"; }

}  // namespace

void add_demo_routes(Router& router, const stats::Registry& registry) {
  // The first three and /stats never block: they run on the loop even in pool mode.
  constexpr bool kNeverBlocks = true;
  router.add(
      "GET", "/", [](const http::Request&, http::Responder& out) { out.send(text("Hello, World!")); }, kNeverBlocks);

  router.add(
      "GET", "/json",
      [](const http::Request&, http::Responder& out) {
        out.send(text(R"({"message":"Hello, World!"})", "application/json"));
      },
      kNeverBlocks);

  router.add(
      "POST", "/echo",
      [](const http::Request& req, http::Responder& out) {
        const std::string* type = req.header("Content-Type");
        out.send(text(req.body, type ? *type : "application/octet-stream"));
      },
      kNeverBlocks);

  router.add("GET", "/sleep", [](const http::Request& req, http::Responder& out) {
    const long ms = query_number(req, "ms", 0, 30'000);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    out.send(text(slept(ms)));
  });

  router.add("GET", "/cpu", [](const http::Request& req, http::Responder& out) {
    out.send(text(burn_cpu(query_number(req, "us", 0, 1'000'000))));
  });

  router.add("GET", "/stream", [](const http::Request& req, http::Responder& out) {
    const long chunks = query_number(req, "chunks", 3, 10'000);
    const long ms = query_number(req, "ms", 0, 10'000);
    out.start_stream(200, "text/plain");
    for (long i = 0; i < chunks; ++i) {
      if (i > 0 && ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      out.send_chunk("chunk " + std::to_string(i) + "\n");
    }
    out.end_stream();
  });

  router.add(
      "GET", "/stats",
      [&registry](const http::Request&, http::Responder& out) {
        out.send(text(registry.to_json().dump(), "application/json"));
      },
      kNeverBlocks);
}

void add_metrics_route(Router& router, const stats::Registry& registry) {
  router.add(
      "GET", "/metrics",
      [&registry](const http::Request&, http::Responder& out) {
        out.send(text(stats::to_prometheus(registry.to_json()), std::string(stats::kPrometheusContentType)));
      },
      /*never_blocks=*/true);
}

// [demo.async]
void add_async_demo_routes(Router& router) {
  router.add_coroutine(
      "GET", "/async/work",
      [](const http::Request& req, http::Responder& out, const CoroutineContext& ctx) -> evloop::Task<void> {
        const long us = query_number(req, "us", 0, 1'000'000);
        if (ctx.executor == nullptr) {
          out.send(http::Response{503, "text/plain", {}, "no executor: run with --dispatch pool\n"});
          co_return;
        }
        out.send(text(co_await evloop::run_in_executor(*ctx.executor, [us] { return burn_cpu(us); })));
      });

  router.add_coroutine(
      "GET", "/async/sleep",
      [](const http::Request& req, http::Responder& out, const CoroutineContext& ctx) -> evloop::Task<void> {
        const long ms = query_number(req, "ms", 0, 30'000);
        co_await evloop::sleep_for(ctx.loop, std::chrono::milliseconds(ms));
        out.send(text(slept(ms)));
      });
}
// [demo.async]

}  // namespace handoff::app
