// probes/probe_report: what the probes share: the machine they ran on, writing and reading
// back a probe's JSON (for --check) and the judgements every --check makes, a figure over
// rounds, a summary table, and two CPUs to pin to (chapter 01).
// Role: one description of the machine, one way to write and load a results file, one
// wording of --check's common problems, one table layout and one placement on two CPUs, so
// that the probes report, judge and pin alike.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::probes {

using Json = nlohmann::ordered_json;

/// {"cpu", "cores", "kernel", "arch"} of this machine: the model from /proc/cpuinfo
/// ("model name" on x86, "Hardware"/"CPU part" on Arm), uname's release and machine.
Json machine();

/// {"median", "min", "max", "rounds"} of `xs` (all 0 and no rounds when it is empty): how every
/// probe reports a figure over rounds. `xs` is in round order, and "rounds" keeps it so: the
/// harness pairs the arms of each round from it (benchmarks/harness/results/rounds.py).
Json median_min_max(std::vector<double> xs);

/// The `q` quantile of `xs` (0 <= q <= 1), nearest rank; 0 when it is empty: how a probe
/// reports a distribution pooled over rounds (p50, p99, max).
double percentile(std::vector<double> xs, double q);

/// The first two CPUs this process may run on, or an empty list if it may run on fewer.
std::vector<int> two_cpus();

/// Pin the calling thread to `cpu`; false if the kernel refuses.
bool pin_to(int cpu);

/// Write `doc` to `path`, pretty-printed; false after a message on stderr that names
/// `tool` when the file cannot be written.
bool write_json(const std::string& path, const Json& doc, const char* tool);

/// The JSON in `path`, or nothing after a message on stderr that names `tool` (the
/// program judging the file): the file cannot be opened, or it is not JSON.
std::optional<Json> read_json(const std::string& path, const char* tool);

/// What every probe's --check asks of a report first: "tool" names `tool`, "machine" is an
/// object, "settings" is one (when `with_settings`), "results" is an array. The problems
/// found, in that order; the caller judges the results only when they are an array.
std::vector<std::string> envelope_problems(const Json& doc, const char* tool, bool with_settings);

/// Each of `keys` that is not an object of `r` whose "median" is above 0 pushed as "WHERE:
/// KEY.median is not a positive number": a rate or a cost that every round measured.
void positive_medians(const Json& r, const std::string& where, std::initializer_list<const char*> keys,
                      std::vector<std::string>& problems);

/// The result a report lists once (an arm, a variant, a policy): the one of `results` that
/// `is` picks, or nullptr after "WHERE appears N times (expected once)" pushed when it picks
/// none or more than one.
const Json* the_one(const Json& results, const std::string& where, const std::function<bool(const Json& r)>& is,
                    std::vector<std::string>& problems);

/// What picks the results whose string `key` is `value`, for the_one.
std::function<bool(const Json& r)> named(const char* key, const std::string& value);

/// --check's verdict: each problem on stderr as "TOOL --check: PROBLEM" and 1, or, with none,
/// "TOOL --check: PATH PASSED" on stdout and 0.
int check_verdict(const std::vector<std::string>& problems, const char* tool, const std::string& path,
                  const std::string& passed);

/// --check FILE, the frame of every probe's judge: the report in `path` read back, its
/// envelope judged (envelope_problems), then, when its "results" are an array, the probe's
/// own `judge(doc, problems)`. The verdict (check_verdict, with `passed`): the exit status.
int check_report(const std::string& path, const char* tool, bool with_settings, const std::string& passed,
                 const std::function<void(const Json& doc, std::vector<std::string>& problems)>& judge);

/// One column of a probe's summary table: its head, its width and decimals, and the number
/// it shows, each result's `key` (its `field` when that is not empty: "median", "p99").
struct Column {
  const char* head;
  int width;
  int decimals;
  const char* key;
  const char* field;
};

/// A probe's summary table on stdout (a `print_table`): a row a result, its "arm"
/// left-aligned in `arm_width`, then each of `columns` right-aligned after a space.
void print_columns(const Json& doc, int arm_width, std::initializer_list<Column> columns);

/// A probe's report, done: printed whole to stdout when `path` is empty, else written to
/// `path` and summed up on stdout by `print_table`. The probe's exit status.
int emit_report(const Json& doc, const std::string& path, const char* tool,
                const std::function<void(const Json&)>& print_table);

}  // namespace handoff::probes
