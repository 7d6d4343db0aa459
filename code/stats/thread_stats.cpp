// stats/thread_stats: per-thread counters and CPU, readable from any thread (chapter 01).
// Changed in chapters 02, 03, 04, 05: each chapter's counters.
#include "stats/thread_stats.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "stats/thread_cpu.h"

namespace handoff::stats {

std::string_view counter_name(Counter c) noexcept {
  switch (c) {
    case Counter::requests:
      return "requests";
    case Counter::handoff_sends:
      return "handoff_sends";
    case Counter::handoff_recvs:
      return "handoff_recvs";
    case Counter::handoff_eagain:
      return "handoff_eagain";
    case Counter::accepts:
      return "accepts";
    case Counter::loop_waits:
      return "loop_waits";
    case Counter::loop_polls:
      return "loop_polls";
    case Counter::wakes_sent:
      return "wakes_sent";
    case Counter::parks:
      return "parks";
    case Counter::spin_catches:
      return "spin_catches";
    case Counter::completion_pokes:
      return "completion_pokes";
    case Counter::syscalls:
      return "syscalls";
    case Counter::jobs_abandoned:
      return "jobs_abandoned";
    case Counter::handler_failures:
      return "handler_failures";
    case Counter::stolen_pokes:
      return "stolen_pokes";
    case Counter::chained_wakes:
      return "chained_wakes";
    case Counter::age_wakes:
      return "age_wakes";
    case Counter::loop_callbacks:
      return "loop_callbacks";
    case Counter::pg_opened:
      return "pg_opened";
    case Counter::pg_closed_on_checkin:
      return "pg_closed_on_checkin";
    case Counter::pg_closed_broken:
      return "pg_closed_broken";
    case Counter::pg_checkouts:
      return "pg_checkouts";
    case Counter::pg_waits:
      return "pg_waits";
    case Counter::pg_timeouts:
      return "pg_timeouts";
    case Counter::pg_peak_open:
      return "pg_peak_open";
    case Counter::pg_checkin_turns:
      return "pg_checkin_turns";
    case Counter::pg_burst_checkins:
      return "pg_burst_checkins";
    case Counter::stack_lock_wakes:
      return "stack_lock_wakes";
    case Counter::stack_lock_contends:
      return "stack_lock_contends";
    case Counter::stack_deferred_work:
      return "stack_deferred_work";
    case Counter::stack_pool_empty_sends:
      return "stack_pool_empty_sends";
    case Counter::stack_lock_handoffs:
      return "stack_lock_handoffs";
    case Counter::stack_lock_sleeps:
      return "stack_lock_sleeps";
    case Counter::stack_lock_wait_us:
      return "stack_lock_wait_us";
    case Counter::stack_lock_long_waits:
      return "stack_lock_long_waits";
    case Counter::conns_adopted:
      return "conns_adopted";
    case Counter::conns_handed_off:
      return "conns_handed_off";
    case Counter::handins_closed:
      return "handins_closed";
    case Counter::stack_moves:
      return "stack_moves";
    case Counter::kCount:
      break;
  }
  return "?";
}

ThreadStats::ThreadStats(std::string name, std::string role) : name_(std::move(name)), role_(std::move(role)) {}

void ThreadStats::attach_current_thread() noexcept {
  name_this_thread(name_.c_str());
  pthread_getcpuclockid(pthread_self(), &clock_);
  state_.store(1, std::memory_order_release);  // publishes clock_ to cpu_ns()
}

void ThreadStats::detach_current_thread() noexcept {
  final_cpu_ns_.store(thread_cpu_ns(), std::memory_order_relaxed);
  state_.store(2, std::memory_order_release);  // publishes final_cpu_ns_ to cpu_ns()
}

std::int64_t ThreadStats::cpu_ns() const noexcept {
  switch (state_.load(std::memory_order_acquire)) {  // pairs with attach/detach
    case 1: {
      timespec ts{};
      if (clock_gettime(clock_, &ts) != 0) return final_cpu_ns_.load(std::memory_order_relaxed);
      return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
    case 2:
      return final_cpu_ns_.load(std::memory_order_relaxed);
    default:
      return 0;
  }
}

nlohmann::json ThreadStats::to_json() const {
  nlohmann::json j;
  j["name"] = name_;
  j["role"] = role_;
  const double cpu_us = static_cast<double>(cpu_ns()) / 1000.0;
  j["cpu_us"] = cpu_us;
  nlohmann::json c = nlohmann::json::object();
  for (std::size_t i = 0; i < static_cast<std::size_t>(Counter::kCount); ++i) {
    c[std::string(counter_name(static_cast<Counter>(i)))] = counters_[i].load(std::memory_order_relaxed);
  }
  j["counters"] = c;
  const auto reqs = get(Counter::requests);
  j["cpu_us_per_request"] = reqs ? cpu_us / static_cast<double>(reqs) : 0.0;
  return j;
}

ThreadStats& Registry::add(std::string name, std::string role) {
  std::lock_guard lock(mu_);
  return threads_.emplace_back(std::move(name), std::move(role));
}

nlohmann::json Registry::to_json() const {
  std::lock_guard lock(mu_);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& t : threads_) arr.push_back(t.to_json());
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, text] : sections_) out[key] = nlohmann::json::parse(text);
  out["threads"] = std::move(arr);
  return out;
}

void Registry::set_section(const std::string& key, nlohmann::json value) {
  std::lock_guard lock(mu_);
  sections_[key] = value.dump();
}

std::string Registry::summary() const {
  std::lock_guard lock(mu_);
  std::string out = "thread          role  cpu_ms    requests  cpu_us/req  handoff_sends  handoff_recvs\n";
  char line[256];
  for (const auto& t : threads_) {
    const double cpu_us = static_cast<double>(t.cpu_ns()) / 1000.0;
    const auto reqs = t.get(Counter::requests);
    std::snprintf(line, sizeof line, "%-15s %-5s %8.1f %10llu %11.2f %14llu %14llu\n", t.name().c_str(),
                  t.role().c_str(), cpu_us / 1000.0, static_cast<unsigned long long>(reqs),
                  reqs ? cpu_us / static_cast<double>(reqs) : 0.0,
                  static_cast<unsigned long long>(t.get(Counter::handoff_sends)),
                  static_cast<unsigned long long>(t.get(Counter::handoff_recvs)));
    out += line;
  }
  return out;
}

}  // namespace handoff::stats
