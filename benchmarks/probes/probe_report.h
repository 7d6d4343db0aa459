// probes/probe_report: what every probe's JSON shares: the machine it ran on, and reading
// a probe's JSON out and back for --check (chapter 01).
// Role: one description of the machine and one way to load a results file, so that the
// probes (handoff-probe, sb-litmus) report and judge their files alike.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace handoff::probes {

using Json = nlohmann::ordered_json;

/// {"cpu", "cores", "kernel", "arch"} of this machine: the model from /proc/cpuinfo
/// ("model name" on x86, "Hardware"/"CPU part" on Arm), uname's release and machine.
Json machine();

/// Write `doc` to `path`, pretty-printed; false after a message on stderr that names
/// `tool` when the file cannot be written.
bool write_json(const std::string& path, const Json& doc, const char* tool);

/// The JSON in `path`, or nothing after a message on stderr that names `tool` (the
/// program judging the file): the file cannot be opened, or it is not JSON.
std::optional<Json> read_json(const std::string& path, const char* tool);

}  // namespace handoff::probes
