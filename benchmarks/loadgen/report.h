// loadgen/report: the run's JSON summary and its raw-samples CSV (chapter 01).
// Role: put a LoadResult into the one JSON shape the harness and the book read.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>

#include "loadgen/load.h"

namespace handoff::loadgen {

/// The summary, with exactly the top-level keys tool, config, requests, errors,
/// duration_s, rps, latency_us, worst_per_connection_us, bytes_read. config.rate is
/// null unless the model is open, config.interval_us null unless paced, and
/// config.duration_s null for a run bounded by --requests alone.
nlohmann::ordered_json to_json(const LoadConfig& config, const LoadResult& result);

/// One line per recorded response, after a header line:
/// send_time_us,due_time_us,latency_us,connection,status (times since the run began).
/// Returns false if writing failed.
bool write_samples_csv(std::FILE* out, const LoadResult& result);

}  // namespace handoff::loadgen
