// stats/prometheus: the /stats counters in Prometheus's text exposition format (chapter 06).
// Role: what a fleet's monitoring scrapes. /metrics serves the same figures /stats does,
// rendered from Registry::to_json() so that the two can never disagree: each thread's CPU
// and counters as counter families labelled by thread and role, and each section a
// component publishes (the upstream's state) as gauges and one info sample. The format is
// Prometheus's "text-based format", version 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace handoff::stats {

/// The Content-Type a scraper expects of the text format.
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/// Render Registry::to_json()'s document ({"threads": [...], "<section>": {...}}) as
/// exposition text: `handoff_thread_cpu_seconds_total{thread="loop-0",role="loop"} 0.25`,
/// `handoff_<counter>_total{...} N` for every counter (`handoff_pg_peak_open`, a maximum,
/// is a gauge), and for each section its numbers and booleans as gauges
/// `handoff_<section>_<key>` and its strings as labels of `handoff_<section>_info 1`.
std::string to_prometheus(const nlohmann::json& stats);

}  // namespace handoff::stats
