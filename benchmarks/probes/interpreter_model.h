// probes/interpreter_model: what gil-spin and pool-churn share, the two probes that run
// threads under a model of CPython's GIL (chapter 04, seed 003; one home since issue 26).
// Role: interpreted work (a checkpoint after every microsecond, as CPython checks its eval
// breaker between bytecodes) and its three settings (--work-us, --after-post-us,
// --callback-us), the per-thread reply a loop bumps for its waker, the arms both cross with
// their own (--spin-us, --lock) and the lock's switch interval, with the report's settings
// entries for both; what both tally of the loop thread run by run (its rate, its CPU, its
// waits for the lock, completions per turn) and the line they say after each run; and the
// --check judgement of those two distributions (the no-lock arm never waited for the lock).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "config/command_line.h"
#include "probe_report.h"
#include "sync/interpreter_lock.h"

namespace handoff::probes {

/// The interpreted work a probe's threads do, µs: a waker's before it posts (lock held), a
/// waker's after it posts (before it releases the lock for its wait), and the loop's per
/// callback.
struct InterpretedWork {
  unsigned work_us;
  unsigned after_post_us;
  unsigned callback_us;
};

/// Add --work-us, --after-post-us and --callback-us, with `work`'s values as defaults. `role`
/// names the waker in the help ("handler", "driver"); `least_us` is the least --work-us and
/// --callback-us take (--after-post-us takes 0); `callback_when` ends --callback-us's help
/// ("per completion").
void add_interpreted_work_flags(config::CommandLine& cli, InterpretedWork& work, const std::string& role,
                                unsigned least_us, const std::string& callback_when);

/// The report's settings entries for `work`: {"work_us", "after_post_us", "callback_us"}.
Json interpreted_work_settings(const InterpretedWork& work);

/// Interpreted work: `ns` of it in 1 µs units (busy on the monotonic clock), a checkpoint
/// of `lock` after each. Each re-take a checkpoint had to make is appended to `waits` when
/// given.
void interpreted(sync::InterpreterLock& lock, std::int64_t ns, std::vector<std::int64_t>* waits);

/// One waker's reply: the loop bumps `seq` (release) once per completion of that waker's,
/// and the waker waits on it (acquire). A cache line each, so that wakers do not share one.
struct alignas(64) Reply {
  std::atomic<std::uint32_t> seq{0};
};

/// The arms both probes cross with their own: the loop's wake spins and the lock model on
/// and off, and the lock's switch interval.
struct LockArms {
  std::vector<unsigned> spins{0, 50};
  std::vector<std::string> locks{"on", "off"};
  unsigned switch_interval_us = 5000;  // CPython's default
};

/// Add --switch-interval-us, --spin-us (a list: default 0,50) and --lock (on,off).
void add_lock_arm_flags(config::CommandLine& cli, LockArms& arms);

/// The report's settings entries for `arms`: {"switch_interval_us", "spin_us", "lock"}.
Json lock_arms_settings(const LockArms& arms);

/// The lock model's options for one arm: `arms`' switch interval, the model on or a no-op.
sync::InterpreterLockOptions lock_options(const LockArms& arms, bool lock);

/// n / d, 0 when d is 0.
double per(double n, std::uint64_t d);

/// The loop's waits for the lock, µs, pooled over rounds: {"p50", "p99", "max", "takes"}.
Json lock_waits(const std::vector<double>& us);

/// Completions per turn, pooled over rounds: {"mean", "p50", "p99", "max", "turns"}.
Json per_turn(const std::vector<double>& completions);

/// What both probes tally of the loop thread, run by run: completions per second and the
/// loop's CPU µs per completion (a figure a run, for median_min_max), its waits for the lock
/// in µs and the completions of each turn (pooled over rounds, for lock_waits and per_turn),
/// and the same two distributions of each run alone: `per_round`, {"loop_lock_wait_us_p50":
/// [one a run], ..., "completions_per_turn_mean": [...], ...}, named as the report's columns
/// are, which the harness pairs round by round (benchmarks/harness/records/probe_rounds.py).
struct LoopTally {
  std::vector<double> per_s, cpu_us;
  std::vector<double> loop_wait_us, per_turn;
  Json per_round = Json::object();
  double last_per_turn = 0;  // the last run's completions per turn

  /// One run's: `completions` in `wall_s`, the loop's CPU over them, every take of the lock
  /// it made (its wait, ns) and the completions of each of its turns.
  void add(std::uint64_t completions, double wall_s, std::int64_t loop_cpu_ns,
           const std::vector<std::int64_t>& waits_ns, const std::vector<std::uint32_t>& turns);
};

/// The line a probe says on stderr after each run, from `t`'s last run: "round R/N ARM
/// RATE UNIT/s, loop X us CPU each, Y per turn", then `more`.
void say_round(unsigned round, unsigned rounds, const std::string& arm, const char* unit, const LoopTally& t,
               const std::string& more);

/// --check's judgement of a result's two distributions: "loop_lock_wait_us" and
/// "completions_per_turn" are objects and, in an arm without the lock model (`lock` false),
/// the loop never waited for the lock. Each problem is pushed as "WHERE: ...".
void judge_loop_distributions(const Json& r, const std::string& where, bool lock, std::vector<std::string>& problems);

}  // namespace handoff::probes
