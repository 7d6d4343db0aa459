// loadgen/load: the generator's library API, one call runs one load (chapter 01).
// Role: check the configuration, build the request bytes, probe the target, start one
// Worker per thread on a common start time, report progress, and merge the results.
#include "loadgen/load.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>

#include "loadgen/worker.h"

namespace handoff::loadgen {
namespace {

constexpr std::size_t kTrainBytes = 64 * 1024;
constexpr int kMaxPipeline = 4096;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

void validate(const LoadConfig& c) {
  if (c.target.address_length == 0) bad("no target: set --url");
  if (c.connections < 1) bad("--connections must be at least 1");
  if (c.threads < 1) bad("--threads must be at least 1");
  if (c.threads > c.connections) bad("--threads must not exceed --connections");
  if (c.pipeline < 1 || c.pipeline > kMaxPipeline) bad("--pipeline must be from 1 to 4096");
  if (!(c.duration_s >= 0) || !std::isfinite(c.duration_s)) bad("--duration must be a number of seconds >= 0");
  if (!(c.warmup_s >= 0) || !std::isfinite(c.warmup_s)) bad("--warmup must be a number of seconds >= 0");
  if (c.duration_s == 0 && c.requests == 0) bad("set --duration or --requests");
  if (c.timeout_ms < 1) bad("--timeout-ms must be at least 1");
  if (c.method != "GET" && c.method != "HEAD" && c.method != "POST" && c.method != "PUT") {
    bad("--method must be GET, HEAD, POST or PUT");
  }
  if (!c.body.empty() && c.method != "POST" && c.method != "PUT") bad("a body needs --method POST or PUT");
  if (c.model == Model::open && !(c.rate > 0 && std::isfinite(c.rate))) bad("--model open needs --rate > 0");
  if (c.model == Model::paced && !(c.interval_us > 0 && std::isfinite(c.interval_us))) {
    bad("--model paced needs --interval-us > 0");
  }
}

std::string build_request(const LoadConfig& c) {
  std::string r = c.method + " " + c.target.path + " HTTP/1.1\r\nHost: " + c.target.host_header + "\r\n";
  if (c.method == "POST" || c.method == "PUT") {
    r += "Content-Type: application/octet-stream\r\nContent-Length: " + std::to_string(c.body.size()) + "\r\n";
  }
  r += "\r\n";
  r += c.body;
  return r;
}

// A blocking check, before any thread starts, that somebody listens at the target, so
// that a wrong port is a setup failure with a message rather than a run of errors.
void probe(const Target& target) {
  const int fd = ::socket(target.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw SetupError(std::string("socket: ") + std::strerror(errno));
  int err = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&target.address), target.address_length) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, 2000) != 1) {
        err = ETIMEDOUT;
      } else {
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
  }
  ::close(fd);
  if (err != 0) {
    throw SetupError("cannot connect to " + target.host_header + ": " + std::strerror(err));
  }
}

}  // namespace

const char* model_name(Model model) noexcept {
  switch (model) {
    case Model::closed:
      return "closed";
    case Model::paced:
      return "paced";
    case Model::open:
      return "open";
  }
  return "closed";
}

Model parse_model(const std::string& name) {
  if (name == "closed") return Model::closed;
  if (name == "paced") return Model::paced;
  if (name == "open") return Model::open;
  bad("--model must be closed, paced or open");
}

LoadResult run_load(const LoadConfig& config) {
  validate(config);
  detail::RunPlan plan;
  plan.config = &config;
  plan.request = build_request(config);
  const std::size_t copies =
      std::clamp<std::size_t>(kTrainBytes / plan.request.size(), 1, static_cast<std::size_t>(config.pipeline));
  plan.request_train.reserve(copies * plan.request.size());
  for (std::size_t i = 0; i < copies; ++i) plan.request_train += plan.request;
  plan.timeout_ns = static_cast<std::int64_t>(config.timeout_ms) * 1'000'000;
  plan.counted = config.requests > 0;
  plan.outcomes_left.store(config.requests, std::memory_order_relaxed);
  probe(config.target);

  const int n = config.threads;
  std::vector<std::unique_ptr<detail::Worker>> workers;
  workers.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) workers.push_back(std::make_unique<detail::Worker>(plan, i));

  std::latch ready(n);
  std::latch go(1);
  std::mutex done_mutex;
  std::condition_variable done_cv;
  int done = 0;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (auto& w : workers) {
    threads.emplace_back([&, worker = w.get()] {
      worker->run(ready, go);
      std::lock_guard lock(done_mutex);
      ++done;
      done_cv.notify_all();
    });
  }
  ready.wait();  // every worker has opened its connections

  std::string setup_error;
  for (auto& w : workers) {
    if (!w->setup_error.empty()) setup_error = w->setup_error;
  }
  const std::int64_t start = detail::now_ns();
  plan.start_ns = start;
  plan.measure_from_ns = start + std::llround(config.warmup_s * 1e9);
  plan.end_ns = config.duration_s > 0 ? plan.measure_from_ns + std::llround(config.duration_s * 1e9) : INT64_MAX;
  if (!setup_error.empty()) plan.stop.store(true, std::memory_order_relaxed);
  go.count_down();  // publishes the times above to every worker

  if (config.on_progress && setup_error.empty()) {
    LatencyHistogram window;
    auto tick = std::chrono::steady_clock::now();
    std::unique_lock lock(done_mutex);
    for (;;) {
      const auto last = tick;
      tick += std::chrono::seconds(1);
      if (done_cv.wait_until(lock, tick, [&] { return done == n; })) break;
      lock.unlock();
      std::uint64_t count = 0;
      window.reset();
      for (auto& w : workers) w->take_progress(window, count);
      const double seconds = std::chrono::duration<double>(tick - last).count();
      config.on_progress(static_cast<double>(detail::now_ns() - start) / 1e9, static_cast<double>(count) / seconds,
                         static_cast<double>(window.percentile(0.99)) / 1e3);
      lock.lock();
    }
  }
  for (auto& t : threads) t.join();
  if (!setup_error.empty()) throw SetupError(setup_error);

  LoadResult result;
  for (auto& w : workers) {
    result.latency.merge(w->latency);
    result.requests += w->requests;
    result.errors.connect += w->errors.connect;
    result.errors.read += w->errors.read;
    result.errors.timeout += w->errors.timeout;
    result.errors.parse += w->errors.parse;
    result.errors.status_4xx += w->errors.status_4xx;
    result.errors.status_5xx += w->errors.status_5xx;
    result.schedule.due += w->schedule.due;
    result.schedule.sent += w->schedule.sent;
    result.schedule.waiting += w->schedule.waiting;
    result.bytes_read += w->bytes_read;
    result.connects += w->connects;
    result.worst_per_connection_ns = std::max(result.worst_per_connection_ns, w->worst_ns);
    result.samples.insert(result.samples.end(), w->samples.begin(), w->samples.end());
  }
  std::sort(result.samples.begin(), result.samples.end(),
            [](const Sample& a, const Sample& b) { return a.send_ns < b.send_ns; });
  const std::int64_t end = std::min(plan.end_ns, plan.stopped_at_ns.load(std::memory_order_relaxed));
  result.duration_s = end == INT64_MAX ? 0.0 : static_cast<double>(end - plan.measure_from_ns) / 1e9;
  return result;
}

}  // namespace handoff::loadgen
