// loadgen/main: the load generator's command line (chapter 01).
// Role: turn flags into a LoadConfig, run it, and write the JSON summary (and the raw
// samples) where asked; exit 0 when the run completed, non-zero for usage or setup.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include "config/command_line.h"

#include "loadgen/load.h"
#include "loadgen/report.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitSetup = 3;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

int main(int argc, char** argv) {
  using namespace handoff::loadgen;
  handoff::config::CommandLine cli{
      "loadgen: HTTP/1.1 load generator for the loopback interface (closed, paced and open models)"};
  std::string url;
  LoadConfig config;
  double duration_s = 0;
  std::uint64_t requests = 0;
  std::string model = "closed";
  std::string body;
  std::size_t body_size = 0;
  std::string json_path;
  std::string samples_path;
  std::string progress = "auto";

  cli.add_option("url,--url", url, "target, http://HOST:PORT/path; HOST must be 127.x.y.z, localhost or [::1]")
      ->required();
  cli.add_option("-c,--connections", config.connections, "connections, kept alive")->show_default();
  cli.add_option("-t,--threads", config.threads, "threads, one epoll loop each")->show_default();
  auto* duration_opt = cli.add_option("-d,--duration", duration_s, "measured seconds (default 10 unless --requests)");
  auto* requests_opt = cli.add_option("-n,--requests", requests, "stop after N requests in the measured window");
  cli.add_option("--warmup", config.warmup_s, "seconds to run before measuring")->show_default();
  auto* method_opt = cli.add_option("--method", config.method, "GET, HEAD, POST or PUT")->show_default();
  auto* body_opt = cli.add_option("--body", body, "request body (POST unless --method says otherwise)");
  auto* size_opt = cli.add_option("--body-size", body_size, "request body of N bytes");
  body_opt->excludes(size_opt);
  cli.add_option("--pipeline", config.pipeline, "requests outstanding per connection")->show_default();
  cli.add_option("--model", model, "closed, paced or open")->one_of({"closed", "paced", "open"})->show_default();
  cli.add_option("--rate", config.rate, "open model: requests per second, in total");
  cli.add_option("--interval-us", config.interval_us, "paced model: microseconds between a connection's requests");
  cli.add_option("--timeout-ms", config.timeout_ms, "a request unanswered this long is an error")->show_default();
  cli.add_option("--raw-samples", samples_path, "write one CSV line per response to FILE");
  cli.add_option("--json", json_path, "write the summary to FILE (default: stdout)");
  cli.add_option("--progress", progress, "one-line progress on stderr each second")
      ->one_of({"auto", "on", "off"})
      ->show_default();
  if (const auto status = cli.parse(argc, argv)) return *status;

  File json_file;
  File samples_file;
  try {
    config.target = parse_target(url);
    config.model = parse_model(model);
    if (requests_opt->given()) config.requests = requests;
    config.duration_s = duration_opt->given() ? duration_s : (requests_opt->given() ? 0.0 : 10.0);
    if (size_opt->given()) body.assign(body_size, 'x');
    if ((body_opt->given() || size_opt->given()) && !method_opt->given()) config.method = "POST";
    config.body = std::move(body);
    config.keep_samples = !samples_path.empty();
    if (!json_path.empty()) {
      json_file.reset(std::fopen(json_path.c_str(), "w"));
      if (!json_file) throw std::invalid_argument("cannot write --json " + json_path);
    }
    if (!samples_path.empty()) {
      samples_file.reset(std::fopen(samples_path.c_str(), "w"));
      if (!samples_file) throw std::invalid_argument("cannot write --raw-samples " + samples_path);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "loadgen: " << e.what() << "\n";
    return kExitUsage;
  }

  const bool show = progress == "on" || (progress == "auto" && isatty(STDERR_FILENO));
  if (show) {
    config.on_progress = [](double elapsed, double rps, double p99_us) {
      std::fprintf(stderr, "\rloadgen %7.1fs %11.0f rps   p99 %10.1f us   ", elapsed, rps, p99_us);
      std::fflush(stderr);
    };
  }

  LoadResult result;
  try {
    result = run_load(config);
  } catch (const std::invalid_argument& e) {
    std::cerr << "loadgen: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "loadgen: " << e.what() << "\n";
    return kExitSetup;
  }
  if (show) std::fputc('\n', stderr);

  const std::string text = to_json(config, result).dump(2) + "\n";
  std::FILE* out = json_file ? json_file.get() : stdout;
  if (std::fputs(text.c_str(), out) < 0 || std::fflush(out) != 0) {
    std::cerr << "loadgen: writing the summary failed\n";
    return kExitSetup;
  }
  if (samples_file && (!write_samples_csv(samples_file.get(), result) || std::fflush(samples_file.get()) != 0)) {
    std::cerr << "loadgen: writing --raw-samples failed\n";
    return kExitSetup;
  }
  return 0;
}
