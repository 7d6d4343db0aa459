// testkit/loop_wake_pingpong: wakes ping-ponged between a pool thread and a loop parked with
// no deadline, through a real CompletionRing, each wake's two store→load steps started at a
// common time-stamp-counter instant, and every lost wake counted (chapter 03).
// Role: the one driver of the loop-flag stress (seed 003's shape on our loop, aligned in time
// as the store-buffering litmus aligns its pair), shared by the completion ring's test
// (fenced: no stall allowed) and the loop-wake-stress probe
// (benchmarks/probes/loop_wake_stress.cpp, which also runs the ring without its fences).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "pool/completion_ring.h"
#include "stats/thread_cpu.h"
#include "stats/thread_stats.h"
#include "sync/spin_wait.h"
#include "testkit/cpu_pin.h"

namespace handoff::testkit {

/// How many wakes a ping-pong runs, and how it paces them.
struct PingPongOptions {
  std::uint64_t wakes = 100'000;
  /// How far ahead of its pong the loop sets the next wake's start, in clock ticks (TSC
  /// cycles on x86): longer than the pong's trip to the pool thread's core.
  std::uint64_t lead_ticks = 5000;
  /// The pool thread starts its push at the loop's start plus an offset drawn per wake,
  /// uniform in [-jitter_ticks, +jitter_ticks], so the two steps overlap every which way.
  std::uint64_t jitter_ticks = 3000;
  /// No pong for this long: look whether the loop sleeps in poll with its flag raised and
  /// the frame waiting (a lost wake); if so, count a stall, poke the loop, and go on.
  std::chrono::milliseconds stall_after{20};
  /// No pong for this long, stall or not: count a stall and end the run.
  std::chrono::milliseconds give_up{5000};
  /// End the run once this many wakes were lost (each one rescued): a negative control only
  /// needs to see the loss, not to count every one. 0: run every wake.
  std::uint64_t enough_stalls = 0;
  /// Pin the pool thread (the caller) and the loop thread each to its own CPU, the first
  /// two the caller may use, for the run (the caller's mask is restored after), so that both
  /// spin at once; false, or fewer than two CPUs: the scheduler places them.
  bool pinned = true;
};

/// What a ping-pong run saw: its wakes, its stalls, and when the first came.
struct PingPongResult {
  std::uint64_t wakes = 0;            ///< pongs the pool thread received
  std::uint64_t stalls = 0;           ///< wakes lost: the loop slept with the frame waiting and no poke
  std::uint64_t first_stall_at = 0;   ///< the ping (1-based) of the first stall; 0: none
  bool ended_early = false;           ///< give_up passed with no pong: the run ended at that wake
  double wall_s = 0;                  ///< from the first ping to the last pong (or the end)
  std::uint64_t loop_waits = 0;       ///< passes on which the loop's re-check found nothing and it blocked
  std::uint64_t recheck_catches = 0;  ///< passes on which the re-check found the frame: no block
  std::uint64_t pokes = 0;            ///< completion pokes the pool thread's pushes sent (not the rescues)
  std::uint64_t late = 0;             ///< wakes whose push began after its start time had passed
};

namespace pingpong_detail {

// The clock both threads wait on: the time-stamp counter on x86 (constant-rate and
// synchronised across cores on every machine this book runs on), else CLOCK_MONOTONIC ns.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(stats::monotonic_ns());
#endif
}

// Whether thread `tid` of this process sleeps (state S in /proc/self/task/TID/stat): a
// thread that is merely descheduled is R, so a loop found asleep with its flag raised is
// parked in poll, not on its way there.
inline bool asleep(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  const std::string stat(buf, static_cast<std::size_t>(n));
  const std::size_t paren = stat.rfind(')');  // the name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'S';
}

}  // namespace pingpong_detail

/// `o.wakes` round trips, each one store-buffering trial on the real ring. The loop thread
/// runs the loop's side exactly as a worker's turn does (announce_wait → has_frames re-check
/// → poll(loop_fd, -1) with NO deadline → end_wait → drain). After each drain it picks the
/// next wake's start, T = now + lead, and the pool thread's, T + a random offset within
/// ±jitter, and publishes both with its pong; then it spins until T and announces. The pool
/// thread (the caller) spins until its own start and pushes (push → read the flag → poke if
/// raised). So the two store→load steps run within tens of cycles of each other, as in the
/// store-buffering litmus (benchmarks/probes/sb_litmus.cpp), instead of the push trailing
/// the pong by a cache transfer, by which time the flag is almost always visible.
///
/// A lost wake is seen, not guessed from a timeout alone: after `stall_after` with no pong
/// the pool thread looks whether the loop's thread sleeps (state S: in its poll) with its
/// flag raised and the frame still in the ring; then nothing will ever wake it, so that
/// counts one stall, and the pool thread pokes it (poke_loop_if_waiting) and carries on. A
/// run therefore yields a rate. If `give_up` passes with no pong at all, the run counts a
/// stall there and ends; the loop is poked until its thread can be joined, and if it has
/// not come out 5 s later the process ends with a message (status 3), as testkit::Watchdog.
inline PingPongResult loop_wake_pingpong(pool::CompletionRing& ring, const PingPongOptions& o) {
  using Clock = std::chrono::steady_clock;
  using pingpong_detail::ticks;
  stats::Registry registry;
  stats::ThreadStats& pool_stats = registry.add("pingpong-pool", "pool");
  stats::ThreadStats& loop_stats = registry.add("pingpong-loop", "loop");

  // The wake the loop is ready for (frames drained + 1). release (loop) / acquire (pool):
  // publishes pool_at, and the loop's drain of the previous frame, before the next push.
  alignas(64) std::atomic<std::uint64_t> turn{0};
  std::uint64_t pool_at = 0;  // the pool thread's start for wake `turn`, written before it
  // relaxed (both): the pool thread raises it before it pokes, and the poke's send/recv
  // orders it before the loop's look after its poll.
  alignas(64) std::atomic<bool> stop{false};
  alignas(64) std::atomic<bool> loop_done{false};  // relaxed: polled in a bounded loop before the join
  std::atomic<pid_t> loop_tid{0};                  // relaxed: written once, before the first `turn`

  /// Counts the frames the pool sends back.
  struct Count final : pool::FrameSink {
    std::uint64_t frames = 0;
    void on_frame(pool::Frame&) override { ++frames; }
  };
  cpu_set_t callers_mask;
  CPU_ZERO(&callers_mask);
  std::vector<int> cpus;  // {pool, loop}
  if (o.pinned && ::sched_getaffinity(0, sizeof callers_mask, &callers_mask) == 0) {
    cpus = testkit::two_cpus(callers_mask);
  }
  const bool pinned = !cpus.empty() && testkit::pin_to(cpus[0]);
  PingPongResult result;
  std::thread loop([&] {
    stats::name_this_thread("pingpong-loop");
    if (pinned) testkit::pin_to(cpus[1]);
    loop_tid.store(::gettid(), std::memory_order_relaxed);
    Count sink;
    pollfd p{ring.loop_fd(), POLLIN, 0};
    std::uint64_t rng = 0x9e3779b97f4a7c15u;  // xorshift64: the per-wake offsets
    const std::uint64_t span = 2 * o.jitter_ticks + 1;
    std::uint64_t at = 0;
    auto next_turn = [&] {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      at = ticks() + o.lead_ticks;
      pool_at = at - o.jitter_ticks + rng % span;
      turn.store(sink.frames + 1, std::memory_order_release);  // publishes pool_at; pairs with the pool's acquire
    };
    next_turn();
    while (sink.frames < o.wakes && !stop.load(std::memory_order_relaxed)) {
      while (ticks() < at) {
      }
      ring.announce_wait();  // the store; the load is the re-check below
      if (ring.has_frames()) {
        ++result.recheck_catches;
      } else {
        ++result.loop_waits;
        p.revents = 0;
        while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
        }
        if ((p.revents & POLLIN) != 0) ring.take_poke(loop_stats);
      }
      ring.end_wait();
      const std::uint64_t before = sink.frames;
      ring.drain(sink);
      if (sink.frames != before && sink.frames < o.wakes) next_turn();
    }
    turn.store(sink.frames + 1, std::memory_order_release);  // the last pong
    loop_done.store(true, std::memory_order_relaxed);
  });

  // Spin a while, then yield: on a machine with two cores shared with other work the loop
  // may need this CPU. Returns whether turn reached `want` before `limit`.
  auto wait_turn = [&](std::uint64_t want, Clock::time_point limit) {
    for (unsigned spins = 0;; ++spins) {
      // acquire: pairs with the loop's release of turn (pool_at, and its drain).
      if (turn.load(std::memory_order_acquire) >= want) return true;
      if (spins < 2000) {
        sync::cpu_relax();
      } else {
        if (Clock::now() >= limit) return false;
        std::this_thread::yield();
      }
    }
  };

  std::uint64_t rescues = 0;  // pokes sent to a loop found parked on a lost wake
  const auto start = Clock::now();
  if (!wait_turn(1, start + o.give_up)) {
    std::fprintf(stderr, "loop_wake_pingpong: the loop thread never started\n");
    std::_Exit(3);
  }
  for (std::uint64_t i = 1; i <= o.wakes; ++i) {
    auto* frame = new pool::Frame{0, i, pool::Frame::Kind::whole, {}};  // before the start: only the push is timed
    const std::uint64_t my_at = pool_at;
    if (ticks() > my_at) ++result.late;
    while (ticks() < my_at) {
    }
    ring.push(frame, pool_stats);
    const auto begun = Clock::now();
    bool answered = wait_turn(i + 1, begun + o.stall_after);
    while (!answered && Clock::now() < begun + o.give_up) {
      if (ring.loop_waiting() && ring.has_frames() &&
          pingpong_detail::asleep(loop_tid.load(std::memory_order_relaxed))) {
        if (result.stalls++ == 0) result.first_stall_at = i;
        ring.poke_loop_if_waiting(pool_stats);  // the rescue: the flag is raised, so it pokes
        ++rescues;
      }
      answered = wait_turn(i + 1, Clock::now() + o.stall_after);
    }
    if (!answered) {
      if (result.stalls++ == 0) result.first_stall_at = i;
      result.ended_early = true;
      break;
    }
    result.wakes = i;
    if (o.enough_stalls != 0 && result.stalls >= o.enough_stalls) break;
  }
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.pokes = pool_stats.get(stats::Counter::completion_pokes) - rescues;

  if (result.wakes < o.wakes) {  // ended early, or enough stalls: the loop must stop waiting too
    stop.store(true, std::memory_order_relaxed);
    const auto give_up = Clock::now() + std::chrono::seconds(5);
    while (!loop_done.load(std::memory_order_relaxed) && Clock::now() < give_up) {
      ring.poke_loop_if_waiting(pool_stats);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!loop_done.load(std::memory_order_relaxed)) {
      std::fprintf(stderr, "loop_wake_pingpong: the loop did not come out of its wait after the run ended at wake %llu\n",
                   static_cast<unsigned long long>(result.wakes));
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
  loop.join();
  if (pinned) ::sched_setaffinity(0, sizeof callers_mask, &callers_mask);
  return result;
}

}  // namespace handoff::testkit
