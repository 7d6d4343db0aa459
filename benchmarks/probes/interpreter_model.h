// probes/interpreter_model: what gil-spin and pool-churn share, the two probes that run
// threads under a model of CPython's GIL (chapter 04, seed 003; one home since issue 26).
// Role: interpreted work (a checkpoint after every microsecond, as CPython checks its eval
// breaker between bytecodes), the per-thread reply a loop bumps for its waker, the flags that
// choose the arms (--spin-us, --lock) and the lock's switch interval, and the two
// distributions both report: the loop's waits for the lock, and completions per turn.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "config/command_line.h"
#include "probe_report.h"
#include "sync/interpreter_lock.h"

namespace handoff::probes {

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

/// n / d, 0 when d is 0.
double per(double n, std::uint64_t d);

/// The loop's waits for the lock, µs, pooled over rounds: {"p50", "p99", "max", "takes"}.
Json lock_waits(const std::vector<double>& us);

/// Completions per turn, pooled over rounds: {"mean", "p50", "p99", "max", "turns"}.
Json per_turn(const std::vector<double>& completions);

}  // namespace handoff::probes
