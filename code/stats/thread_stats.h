// stats/thread_stats: per-thread counters and CPU, readable from any thread (chapter 01).
// Changed in chapters 02, 03, 04, 05: each chapter's counters.
// Role: every server thread registers one ThreadStats; /stats, --stats and the tests
// read them while the server runs, to price each request on each thread.
#pragma once

#include <pthread.h>
#include <time.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

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
  // chapter 04, part 2: the worker's upstream pool (upstream::QueuePool), published by /db
  pg_opened,             ///< upstream connections opened (each a new PostgreSQL session)
  pg_closed_on_checkin,  ///< check-ins that found the idle queue full and closed the connection
  pg_closed_broken,      ///< check-ins of connections no longer usable, closed
  pg_checkouts,          ///< checkouts asked of the pool
  pg_waits,              ///< checkouts that found the pool at its limit and queued
  pg_timeouts,           ///< queued checkouts that ended in the timeout
  pg_peak_open,          ///< the most connections the pool has had open at once
  pg_checkin_turns,      ///< loop turns that had at least one check-in
  pg_burst_checkins,     ///< check-ins that came after pool_size others in the same turn
  // chapter 05: the stack lock (stack::NetworkStack), named after Onload's stackdump counters
  stack_lock_wakes,        ///< FUTEX_WAKEs this thread's unlocks of a stack lock sent (lock_wakes)
  stack_lock_contends,     ///< sends whose try-lock of the stack lock failed (tcp_send_ni_lock_contends)
  stack_deferred_work,     ///< sends this thread left in the lock word for the holder (deferred_work)
  stack_pool_empty_sends,  ///< sends that found the lock-free packet pool empty (tcp_send_nonb_pool_empty)
  stack_lock_handoffs,     ///< unlocks that handed the stack lock to a starving waiter (hand-off variant)
  stack_lock_sleeps,       ///< FUTEX_WAITs in this thread's contended blocking takes of a stack lock
                           ///< (not counted for the take after a full deferral list)
  stack_lock_wait_us,      ///< µs spent in those takes, buzz and sleep (pool-empty, large and
                           ///< after-wait sends, push, close)
  stack_lock_long_waits,   ///< those takes that waited over 1 ms: a starved waiter, or a preempted holder
  // chapter 05: topologies and a stack per worker
  conns_adopted,     ///< connections this loop took as its own: accepted by itself or handed in (loop)
  conns_handed_off,  ///< accepted sockets this loop (the pool topology's acceptor) handed to another worker
  handins_closed,    ///< handed-in sockets closed unserved: their worker was draining or had stopped (loop)
  stack_moves,       ///< adopted sockets Onload moved into this worker's own stack (loop; 0 without Onload)
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
  /// {"threads":[...]} with each thread's CPU, counters and µs of CPU per request, and
  /// beside it each section set below.
  nlohmann::json to_json() const;
  /// Set (or replace) a top-level section of to_json() that is not a thread's: what a
  /// component says of its state (chapter 04's "upstream"). Any thread.
  void set_section(const std::string& key, nlohmann::json value);
  /// A human summary for --stats at exit.
  std::string summary() const;

 private:
  mutable std::mutex mu_;
  std::deque<ThreadStats> threads_;
  // key -> the section's JSON text (json_fwd.hpp here keeps nlohmann's header out of every
  // file that includes this one); guarded by mu_
  std::map<std::string, std::string> sections_;
};

}  // namespace handoff::stats
