// stats/thread_cpu: the per-thread CPU instrument (chapter 01).
#include "stats/thread_cpu.h"

#include <pthread.h>
#include <time.h>

namespace handoff::stats {

namespace {
std::int64_t read_clock(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t thread_cpu_ns() noexcept { return read_clock(CLOCK_THREAD_CPUTIME_ID); }

std::int64_t monotonic_ns() noexcept { return read_clock(CLOCK_MONOTONIC); }

void name_this_thread(const char* name) noexcept { pthread_setname_np(pthread_self(), name); }

}  // namespace handoff::stats
