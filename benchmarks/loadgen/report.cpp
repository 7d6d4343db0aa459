// loadgen/report: the run's JSON summary and its raw-samples CSV (chapter 01).
// Role: the key names and units of the summary, in one place.
#include "loadgen/report.h"

#include <cinttypes>

namespace handoff::loadgen {
namespace {

double us(std::int64_t ns) { return static_cast<double>(ns) / 1e3; }

}  // namespace

nlohmann::ordered_json to_json(const LoadConfig& config, const LoadResult& result) {
  using json = nlohmann::ordered_json;
  const LatencyHistogram& h = result.latency;
  json j;
  j["tool"] = "loadgen";
  j["config"] = {
      {"url", config.target.url},
      {"method", config.method},
      {"connections", config.connections},
      {"threads", config.threads},
      {"pipeline", config.pipeline},
      {"model", model_name(config.model)},
      {"rate", config.model == Model::open ? json(config.rate) : json(nullptr)},
      {"interval_us", config.model == Model::paced ? json(config.interval_us) : json(nullptr)},
      {"duration_s", config.duration_s > 0 ? json(config.duration_s) : json(nullptr)},
      {"warmup_s", config.warmup_s},
      {"body_size", config.body.size()},
  };
  j["requests"] = result.requests;
  j["errors"] = {
      {"connect", result.errors.connect},       {"read", result.errors.read},
      {"timeout", result.errors.timeout},       {"parse", result.errors.parse},
      {"status_4xx", result.errors.status_4xx}, {"status_5xx", result.errors.status_5xx},
  };
  j["duration_s"] = result.duration_s;
  j["rps"] = result.rps();
  j["latency_us"] = {
      {"p50", us(h.percentile(0.50))},
      {"p90", us(h.percentile(0.90))},
      {"p99", us(h.percentile(0.99))},
      {"p99_9", us(h.percentile(0.999))},
      {"max", us(h.max())},
      {"mean", h.mean() / 1e3},
      {"min", us(h.min())},
  };
  j["worst_per_connection_us"] = us(result.worst_per_connection_ns);
  j["bytes_read"] = result.bytes_read;
  j["schedule"] =
      config.model == Model::closed
          ? json(nullptr)
          : json{{"due", result.schedule.due}, {"sent", result.schedule.sent}, {"waiting", result.schedule.waiting}};
  return j;
}

bool write_samples_csv(std::FILE* out, const LoadResult& result) {
  bool ok = std::fputs("send_time_us,due_time_us,latency_us,connection,status\n", out) >= 0;
  for (const Sample& s : result.samples) {
    ok = ok && std::fprintf(out, "%.3f,%.3f,%.3f,%" PRIu32 ",%u\n", us(s.send_ns), us(s.due_ns), us(s.latency_ns),
                            s.connection, static_cast<unsigned>(s.status)) > 0;
  }
  return ok;
}

}  // namespace handoff::loadgen
