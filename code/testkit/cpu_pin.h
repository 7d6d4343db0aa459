// testkit/cpu_pin: pin the calling thread to one CPU, and find two CPUs to pin a pair to
// (chapter 03).
// Role: the one copy of the pinning that the store-buffering experiments share (the
// probes sb-litmus and herd-probe, and the loop's wake ping-pong in its test and probe): two
// threads on two distinct CPUs, so that each has its own store buffer.
#pragma once

#include <sched.h>

#include <vector>

namespace handoff::testkit {

/// The first two CPUs in `mask`, or none if it holds fewer.
inline std::vector<int> two_cpus(const cpu_set_t& mask) {
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  }
  if (cpus.size() < 2) cpus.clear();
  return cpus;
}

/// The first two CPUs the calling thread may run on, or none if it may run on fewer.
inline std::vector<int> two_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return {};
  return two_cpus(mask);
}

/// Pin the calling thread to `cpu`; false if the kernel refuses.
inline bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::sched_setaffinity(0, sizeof set, &set) == 0;
}

}  // namespace handoff::testkit
