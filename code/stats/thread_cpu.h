// stats/thread_cpu: the per-thread CPU instrument (chapter 01).
// Role: read the calling thread's own CPU clock, so that every server thread can say
// how many microseconds of CPU it spent per request, the figure every chapter compares.
#pragma once

#include <cstdint>

namespace handoff::stats {

/// CPU time consumed so far by the calling thread, in nanoseconds
/// (CLOCK_THREAD_CPUTIME_ID: user + system time of this thread only).
std::int64_t thread_cpu_ns() noexcept;

/// Wall-clock monotonic time in nanoseconds (CLOCK_MONOTONIC).
std::int64_t monotonic_ns() noexcept;

/// Name the calling thread (at most 15 characters are kept by Linux), so that
/// `top -H`, /proc/PID/task/TID/comm and the harness can tell loop from pool threads.
void name_this_thread(const char* name) noexcept;

}  // namespace handoff::stats
