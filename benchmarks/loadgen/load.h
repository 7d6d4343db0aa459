// loadgen/load: the generator's library API, one call runs one load (chapter 01).
// Role: say what a run is (LoadConfig), what it measured (LoadResult), and run it
// in-process (run_load), so that the command line and the tests drive the same code.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "loadgen/histogram.h"
#include "loadgen/target.h"

namespace handoff::loadgen {

/// How requests are issued.
enum class Model {
  closed,  ///< each connection keeps `pipeline` requests outstanding: a response sends the next
  paced,   ///< each connection sends one request every interval_us; a late slot goes at once;
           ///< latency is measured from the send
  open,    ///< `rate` requests/s in total on a fixed schedule; latency is measured from
           ///< the request's due time, so a stall is charged to every request it delayed
};

const char* model_name(Model model) noexcept;
/// Parses "closed", "paced" or "open"; throws std::invalid_argument otherwise.
Model parse_model(const std::string& name);

/// One run. run_load() checks it and throws std::invalid_argument, naming the field,
/// when it is inconsistent.
struct LoadConfig {
  Target target;
  std::string method = "GET";  ///< GET, HEAD, POST or PUT (a body only with POST and PUT)
  std::string body;            ///< request body, sent with a Content-Length
  int connections = 16;
  int threads = 1;   ///< each thread runs its own epoll loop over connections i % threads
  int pipeline = 1;  ///< requests a connection may have outstanding
  Model model = Model::closed;
  double rate = 0;             ///< open: requests per second, all connections together
  double interval_us = 0;      ///< paced: microseconds between one connection's requests
  double duration_s = 10;      ///< measured window; 0 = until `requests` are done
  std::uint64_t requests = 0;  ///< stop after this many outcomes (responses and request
                               ///< errors) in the measured window; 0 = no count limit
  double warmup_s = 0;         ///< run this long first, recording nothing
  int timeout_ms = 5000;       ///< a request unanswered this long fails as "timeout"
  bool keep_samples = false;   ///< keep one Sample per recorded response (for --raw-samples)
  /// Called about once a second from run_load's own thread while the load runs; empty
  /// = no progress bookkeeping at all.
  std::function<void(double elapsed_s, double rps, double p99_us)> on_progress;
};

struct ErrorCounts {
  std::uint64_t connect = 0;     ///< a connection attempt failed or timed out
  std::uint64_t read = 0;        ///< the connection failed or closed with a request outstanding
  std::uint64_t timeout = 0;     ///< a request went unanswered for timeout_ms
  std::uint64_t parse = 0;       ///< the bytes received were not a valid response
  std::uint64_t status_4xx = 0;  ///< complete responses with status 400-499 (also in `requests`)
  std::uint64_t status_5xx = 0;  ///< complete responses with status 500-599 (also in `requests`)
};

/// One recorded response (nanoseconds since the run began, warmup included).
struct Sample {
  std::int64_t send_ns;
  std::int64_t due_ns;
  std::int64_t latency_ns;
  std::uint32_t connection;
  std::uint16_t status;
};

/// What the paced and open models' schedule did in the measured window; all zero under
/// closed, which has no schedule. Slot k of connection i of N falls due at
/// start + (i/N + k) x interval, fixed by the configuration alone and never by an answer,
/// and every slot that falls due is sent, none skipped: a late one goes as soon as its
/// connection has a free pipeline place. So, whatever the machine's speed,
/// `due == sent + waiting`, and `due` is rate x duration (open) or
/// connections x duration / interval (paced) up to one slot per connection of rounding.
/// With `requests` (-n) the counts run until each thread stops, a little past the window.
struct ScheduleCounts {
  std::uint64_t due = 0;      ///< slots whose due time fell in the measured window
  std::uint64_t sent = 0;     ///< of those, the ones put on their connection to be written
  std::uint64_t waiting = 0;  ///< of those, the ones still waiting when the window closed:
                              ///< for a free pipeline place, an open connection, or the
                              ///< thread's next turn
};

struct LoadResult {
  std::uint64_t requests = 0;  ///< complete responses in the measured window
  ErrorCounts errors;
  ScheduleCounts schedule;
  double duration_s = 0;                     ///< the measured window as it actually ran
  LatencyHistogram latency;                  ///< nanoseconds, one value per counted response
  std::int64_t worst_per_connection_ns = 0;  ///< max over connections of their worst latency
  std::uint64_t bytes_read = 0;              ///< bytes received in the measured window
  std::uint64_t connects = 0;                ///< connections established, whole run
  std::vector<Sample> samples;               ///< when keep_samples, sorted by send time

  double rps() const noexcept { return duration_s > 0 ? static_cast<double>(requests) / duration_s : 0.0; }
};

/// Thrown by run_load when the run cannot start (the target refuses connections, no
/// epoll, ...), as opposed to std::invalid_argument for a bad configuration.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Run the load described by `config` and return what it measured. Blocks for
/// warmup_s + duration_s (or until `requests` are done). Errors during the run are
/// counted in the result, never thrown.
LoadResult run_load(const LoadConfig& config);

}  // namespace handoff::loadgen
