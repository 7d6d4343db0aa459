// stats/thread_stats: per-thread counters and CPU, readable from any thread (chapter 01).
// Role: every server thread registers one ThreadStats; /stats, --stats and the tests
// read them while the server runs, to price each request on each thread.
#pragma once

#include <pthread.h>
#include <time.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::stats {

/// What a counter counts. Later chapters append (never reorder) to widen the set.
enum class Counter : std::size_t {
  requests,        ///< loop: responses completed; pool: jobs run
  handoff_sends,   ///< hand-off syscalls that send (sendto of a job, a frame, a pill)
  handoff_recvs,   ///< hand-off syscalls that receive (including one that found nothing)
  handoff_eagain,  ///< hand-off sends that found the channel full and were retried later
  accepts,         ///< connections accepted (loop)
  loop_waits,      ///< epoll_wait calls that were allowed to block (loop)
  loop_polls,      ///< epoll_wait calls with a zero timeout: work was already waiting (loop)
  // chapter 02: the ring hand-off
  wakes_sent,        ///< pokes sent to a parked pool thread's lane
  parks,             ///< times a pool thread blocked in recv for want of work
  spin_catches,      ///< jobs a spinning pool thread caught before it parked
  completion_pokes,  ///< pokes sent to a loop that said it was waiting
  // the reader pass: the mechanism counted
  syscalls,          ///< every system call this thread made on the request path
  jobs_abandoned,    ///< jobs dropped unrun: their connection closed, or shutdown's deadline passed
  handler_failures,  ///< handlers that threw or returned without answering (answered 500)
  // chapter 03: the stolen wake credit
  stolen_pokes,   ///< pokes a pool thread read in its lane poll while it was not parked
  chained_wakes,  ///< pokes a pool thread sent on after a pop that left work in the ring
  // chapter 03: the elastic pool
  age_wakes,  ///< wakes the loop sent because the job ring's pops stood still past T with jobs in it
  // chapter 04: the callback loop
  loop_callbacks,  ///< callbacks the worker's evloop::EventLoop ran (loop; 0 without one)
  kCount
};
std::string_view counter_name(Counter c) noexcept;

/// One thread's statistics. The owning thread bumps counters with relaxed atomics (no
/// ordering with anything else is needed: readers want a recent value, not a consistent
/// cut). Any thread may read them and the owner's CPU clock while the owner runs.
class ThreadStats {
 public:
  ThreadStats(std::string name, std::string role);

  const std::string& name() const noexcept { return name_; }
  const std::string& role() const noexcept { return role_; }

  void add(Counter c, std::uint64_t n = 1) noexcept {
    // relaxed: a statistic, read by /stats; it orders nothing.
    counters_[static_cast<std::size_t>(c)].fetch_add(n, std::memory_order_relaxed);
  }
  std::uint64_t get(Counter c) const noexcept {
    return counters_[static_cast<std::size_t>(c)].load(std::memory_order_relaxed);
  }

  /// Called on the thread itself when it starts: binds this record to its CPU clock.
  void attach_current_thread() noexcept;
  /// Called on the thread itself just before it exits: freezes its CPU figure.
  void detach_current_thread() noexcept;
  /// CPU time of the thread so far (or at exit), in nanoseconds.
  std::int64_t cpu_ns() const noexcept;

  nlohmann::json to_json() const;

 private:
  std::string name_;
  std::string role_;
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(Counter::kCount)> counters_{};
  clockid_t clock_{};
  // Release on attach/detach pairs with the acquire in cpu_ns(): a reader that sees
  // `state_` set also sees `clock_` / `final_cpu_ns_` written before it.
  std::atomic<int> state_{0};  // 0 not started, 1 running, 2 exited
  std::atomic<std::int64_t> final_cpu_ns_{0};
};

/// The set of threads of one server. Registration is rare (thread start); reading is
/// /stats. Records live as long as the registry (a deque keeps their addresses stable).
class Registry {
 public:
  ThreadStats& add(std::string name, std::string role);
  /// {"threads":[...]} with each thread's CPU, counters and µs of CPU per request.
  nlohmann::json to_json() const;
  /// A human summary for --stats at exit.
  std::string summary() const;

 private:
  mutable std::mutex mu_;
  std::deque<ThreadStats> threads_;
};

}  // namespace handoff::stats
