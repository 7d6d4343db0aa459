// testkit/loop_wake_pingpong: wakes ping-ponged between a pool thread and a loop parked with
// no deadline, through a real CompletionRing, with a no-progress bound (chapter 03).
// Role: the one driver of the loop-flag stress (seed 003's shape on our loop), shared by the
// completion ring's test (fenced: no stall allowed) and the loop-wake-stress probe
// (benchmarks/probes/loop_wake_stress.cpp, which also runs the ring without its fences).
#pragma once

#include <poll.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "pool/completion_ring.h"
#include "stats/thread_cpu.h"
#include "stats/thread_stats.h"

namespace handoff::testkit {

struct PingPongResult {
  std::uint64_t wakes = 0;            ///< pongs the pool thread received
  bool stalled = false;               ///< a pong did not come within the no-progress bound
  std::uint64_t stall_at = 0;         ///< the ping (1-based) whose pong did not come; 0: none
  double wall_s = 0;                  ///< from the first ping to the last pong (or the stall)
  std::uint64_t loop_waits = 0;       ///< passes on which the loop's re-check found nothing and it blocked
  std::uint64_t recheck_catches = 0;  ///< passes on which the re-check found the frame: no block
  std::uint64_t pokes = 0;            ///< completion pokes the pool thread sent
};

/// `wakes` round trips. The pool thread (the caller) pushes one frame into `ring` and waits
/// for the loop's pong; the loop thread runs the loop's side of the protocol exactly as a
/// worker's turn does (announce_wait → has_frames re-check → poll(loop_fd, -1) with NO
/// deadline → end_wait → drain) and pongs each frame it drained. The pool thread spins for
/// the pong and pushes the next frame at once, so every ping meets a loop that is about to
/// park (between its announcement and its re-check, the store-buffering window) or parked.
///
/// When no pong comes for `stall_after`, the run counts a stall at that ping and ends: a
/// lost wake leaves the loop parked for good, so the run has measured what it came for,
/// and ending it keeps a stalled run at `stall_after` of extra time. To join the loop
/// thread the pool thread then pokes it (poke_loop_if_waiting: the loop's flag is raised
/// and visible by then); if the loop has not come out 5 s later, the process ends with a
/// message (status 3), as testkit::Watchdog does.
inline PingPongResult loop_wake_pingpong(pool::CompletionRing& ring, std::uint64_t wakes,
                                         std::chrono::milliseconds stall_after) {
  using Clock = std::chrono::steady_clock;
  stats::Registry registry;
  stats::ThreadStats& pool_stats = registry.add("pingpong-pool", "pool");
  stats::ThreadStats& loop_stats = registry.add("pingpong-loop", "loop");

  // The loop's pong: how many frames it has drained. release (loop) / acquire (pool): the
  // pool thread's next push comes after the loop's drain of the previous frame.
  alignas(64) std::atomic<std::uint64_t> pong{0};
  // relaxed (both): the pool thread raises it before it pokes, and the poke's send/recv
  // orders it before the loop's look after its poll.
  alignas(64) std::atomic<bool> stop{false};
  alignas(64) std::atomic<bool> loop_done{false};  // relaxed: polled in a bounded loop before the join

  struct Count final : pool::FrameSink {
    std::uint64_t frames = 0;
    void on_frame(pool::Frame&) override { ++frames; }
  };
  PingPongResult result;
  std::thread loop([&] {
    stats::name_this_thread("pingpong-loop");
    Count sink;
    pollfd p{ring.loop_fd(), POLLIN, 0};
    while (sink.frames < wakes && !stop.load(std::memory_order_relaxed)) {
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
      if (sink.frames != before) pong.store(sink.frames, std::memory_order_release);
    }
    loop_done.store(true, std::memory_order_relaxed);
  });

  const auto start = Clock::now();
  for (std::uint64_t i = 1; i <= wakes; ++i) {
    ring.push(new pool::Frame{0, i, pool::Frame::Kind::whole, {}}, pool_stats);
    bool answered = false;
    for (unsigned spins = 0; spins < 2000 && !answered; ++spins) {
      answered = pong.load(std::memory_order_acquire) >= i;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    const auto deadline = Clock::now() + stall_after;
    while (!answered && Clock::now() < deadline) {
      std::this_thread::yield();  // the loop may need this CPU
      answered = pong.load(std::memory_order_acquire) >= i;
    }
    if (!answered) {
      result.stalled = true;
      result.stall_at = i;
      break;
    }
    result.wakes = i;
  }
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();

  if (result.stalled) {
    stop.store(true, std::memory_order_relaxed);
    const auto give_up = Clock::now() + std::chrono::seconds(5);
    while (!loop_done.load(std::memory_order_relaxed) && Clock::now() < give_up) {
      ring.poke_loop_if_waiting(pool_stats);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!loop_done.load(std::memory_order_relaxed)) {
      std::fprintf(stderr, "loop_wake_pingpong: the loop did not come out of its wait after a stall at wake %llu\n",
                   static_cast<unsigned long long>(result.stall_at));
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
  loop.join();
  result.pokes = pool_stats.get(stats::Counter::completion_pokes);
  return result;
}

}  // namespace handoff::testkit
