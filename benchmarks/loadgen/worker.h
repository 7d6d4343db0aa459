// loadgen/worker: one generator thread, an epoll loop over its share of the connections (chapter 01).
// Role: issue requests by the configured model, read and parse the responses, and
// record latencies and errors into the thread's own histogram and counters.
#pragma once

#include <atomic>
#include <cstdint>
#include <latch>
#include <mutex>
#include <string>
#include <vector>

#include "loadgen/histogram.h"
#include "loadgen/load.h"
#include "loadgen/response_parser.h"

namespace handoff::loadgen::detail {

/// What every worker shares. Written by run_load before the workers pass the `go`
/// latch (whose count_down/wait orders those writes before the workers' reads), then
/// read-only, except the atomics.
struct RunPlan {
  const LoadConfig* config = nullptr;
  std::string request;        ///< one request, head and body
  std::string request_train;  ///< `request` repeated, so a batch of requests is one send()
  std::int64_t timeout_ns = 0;
  std::int64_t start_ns = 0;         ///< the run begins (warmup first); schedules start here
  std::int64_t measure_from_ns = 0;  ///< start_ns + warmup
  std::int64_t end_ns = 0;           ///< the measured window ends; INT64_MAX if by count
  bool counted = false;              ///< config->requests > 0
  /// Outcomes still to record when `counted`. A worker takes one per outcome with a
  /// relaxed fetch_sub: the count needs no ordering with anything else, only atomicity.
  std::atomic<std::uint64_t> outcomes_left{0};
  /// Set by the worker that takes the last outcome (or by run_load); read relaxed in
  /// every loop turn: a worker only needs to see it eventually, and the results are
  /// handed over by thread join, which orders everything.
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> stopped_at_ns{INT64_MAX};
};

/// One thread's share of the load: connections i with i % threads == index.
///
/// Guarantee: every request it sends ends in exactly one of: a recorded response, an
/// error count (read / timeout / parse), a re-send on a fresh connection (when the
/// server closed the connection gracefully, or a request ahead of it failed), or
/// abandonment at the end of the run. Under paced and open, every schedule slot that
/// falls due is sent, late or not, none skipped (`schedule` counts them). Nothing is
/// allocated per request: the in-flight entries live in one array sized connections x
/// pipeline, the read buffer is one per thread, and a batch of requests is one send()
/// from the shared request train.
class Worker {
 public:
  Worker(RunPlan& plan, int index);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// The thread body: connect, count down `ready`, wait for `go`, run the load.
  void run(std::latch& ready, std::latch& go);

  /// Progress: move what was recorded since the last call into `into`.
  void take_progress(LatencyHistogram& into, std::uint64_t& responses);

  // Results, read after the thread is joined.
  LatencyHistogram latency;
  ErrorCounts errors;
  ScheduleCounts schedule;
  std::uint64_t requests = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t connects = 0;
  std::int64_t worst_ns = 0;
  std::vector<Sample> samples;
  std::string setup_error;  ///< set when the worker could not start (epoll_create failed)

 private:
  enum class State : std::uint8_t { backoff, connecting, open };
  enum class Fail : std::uint8_t { read, timeout, parse };

  struct Entry {
    std::int64_t due_ns;
    std::int64_t sent_ns;
  };

  struct Conn {
    Conn(std::uint32_t id_, std::uint32_t base_, ResponseParser parser_) : id(id_), base(base_), parser(parser_) {}
    int fd = -1;
    std::uint32_t id;
    std::uint32_t base;            ///< its in-flight ring: entries_[base, base + pipeline)
    std::uint32_t head = 0;        ///< ring index of the oldest outstanding request
    std::uint32_t size = 0;        ///< outstanding requests (sent or queued for sending)
    std::uint32_t generation = 0;  ///< bumped per socket; tags epoll events
    State state = State::backoff;
    bool want_out = false;      ///< EPOLLOUT is registered
    bool write_failed = false;  ///< send() failed; the read side will report how
    bool timer_armed = false;
    std::uint32_t out_pos = 0;     ///< offset of the next byte to send within one request
    std::uint64_t out_left = 0;    ///< bytes queued but not yet sent
    std::uint64_t slot = 0;        ///< paced/open: index of the next scheduled request
    std::int64_t next_due_ns = 0;  ///< paced/open: due time of request `slot`
    std::int64_t timer_at_ns = 0;
    std::int64_t connect_started_ns = 0;
    std::int64_t worst_ns = 0;
    ResponseParser parser;
  };

  struct Timer {
    std::int64_t at_ns;
    std::uint32_t conn;
    bool retry;  ///< reconnect after a failed connect; otherwise a schedule slot
    bool operator>(const Timer& other) const noexcept { return at_ns > other.at_ns; }
  };

  static bool on_response_thunk(void* self, int status);
  bool on_response(int status);

  void open_connection(Conn& c, std::int64_t now);
  void connected(Conn& c, std::int64_t now);
  void finish_connect(Conn& c, std::int64_t now);
  void close_connection(Conn& c);
  void reconnect(Conn& c, std::int64_t now);
  void connect_failed(Conn& c, std::int64_t now);
  void fail_front(Conn& c, Fail kind, std::int64_t now);
  bool readable(Conn& c);
  void fill(Conn& c, std::int64_t now);
  void flush(Conn& c);
  void set_interest(Conn& c, bool want_out);
  void arm(Conn& c, std::int64_t at, bool retry);
  void run_timers(std::int64_t now);
  void check_timeouts(std::int64_t now);
  void schedule_slot(Conn& c);
  std::int64_t due_of(const Conn& c, std::uint64_t slot) const;
  std::uint64_t first_slot_from(const Conn& c, std::int64_t t) const;
  void count_schedule(std::int64_t until);
  bool claim_outcome(std::int64_t now);
  void record(Conn& c, const Entry& e, int status, std::int64_t now);
  void publish_progress();

  Entry& at(Conn& c, std::uint32_t i) { return entries_[c.base + i]; }
  std::uint32_t ring_index(const Conn& c, std::uint32_t k) const {
    const std::uint32_t i = c.head + k;
    return i >= pipeline_ ? i - pipeline_ : i;
  }

  RunPlan& plan_;
  const LoadConfig& config_;
  int epoll_fd_ = -1;
  std::uint32_t pipeline_;
  std::uint64_t request_size_;
  bool measure_from_due_;        ///< the open model charges latency from the due time
  double slot_interval_ns_ = 0;  ///< paced/open: time between one connection's requests
  std::vector<Conn> conns_;
  std::vector<Entry> entries_;
  std::vector<Timer> timers_;  ///< a min-heap by at_ns
  std::vector<char> read_buffer_;
  bool started_ = false;
  Conn* current_ = nullptr;  ///< the connection being parsed (for on_response)
  std::int64_t now_ = 0;     ///< when its bytes arrived
  bool unsolicited_ = false;

  bool progress_ = false;
  LatencyHistogram progress_local_;
  std::uint64_t progress_local_count_ = 0;
  std::mutex progress_mutex_;
  LatencyHistogram progress_shared_;         ///< guarded by progress_mutex_
  std::uint64_t progress_shared_count_ = 0;  ///< guarded by progress_mutex_
};

/// CLOCK_MONOTONIC in nanoseconds.
std::int64_t now_ns() noexcept;

}  // namespace handoff::loadgen::detail
