// micro/ring_bench: what one MpmcRing hand-off costs (chapter 02).
// Role: prices the ring on its own, before any pool is built on it: a push and a pop on
// one thread (the floor), throughput with one and two producer/consumer pairs, and a round
// trip between two threads that spin on each other (the hand-off the pool's spin absorbs).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>

#include "sync/mpmc_ring.h"

namespace {

using handoff::sync::MpmcRing;

/// Tells the core we are spinning; gives the CPU away now and then, so that a spinning
/// thread on a shared, oversubscribed machine cannot starve the one it waits for.
inline void spin_pause(std::uint32_t& spins) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
  if (++spins % 1024 == 0) std::this_thread::yield();
}

inline void push_spin(MpmcRing<std::uint64_t>& ring, std::uint64_t v) {
  std::uint32_t spins = 0;
  while (!ring.try_push(std::uint64_t{v})) spin_pause(spins);
}

inline std::uint64_t pop_spin(MpmcRing<std::uint64_t>& ring) {
  std::uint64_t v = 0;
  std::uint32_t spins = 0;
  while (!ring.try_pop(v)) spin_pause(spins);
  return v;
}

// One thread pushes and pops: no contention, the cache lines never leave the core. The
// floor under every other figure.
void BM_PushPopOneThread(benchmark::State& state) {
  MpmcRing<std::uint64_t> ring(1024);
  std::uint64_t i = 0, out = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ring.try_push(std::uint64_t{i++}));
    benchmark::DoNotOptimize(ring.try_pop(out));
  }
  benchmark::DoNotOptimize(out);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PushPopOneThread);

// Even-numbered benchmark threads produce, odd ones consume, one item per iteration each;
// every thread runs the same number of iterations, so the pops match the pushes and the
// ring is empty when the run ends. Thread 0 makes the ring before the loop's start barrier
// and frees it after the end barrier; the others touch it only inside the loop.
MpmcRing<std::uint64_t>* g_shared_ring = nullptr;

void BM_Throughput(benchmark::State& state) {
  if (state.thread_index() == 0) g_shared_ring = new MpmcRing<std::uint64_t>(1024);
  const bool producer = state.thread_index() % 2 == 0;
  std::uint64_t i = 0, sum = 0;
  for (auto _ : state) {
    if (producer) {
      push_spin(*g_shared_ring, i++);
    } else {
      sum += pop_spin(*g_shared_ring);
    }
  }
  benchmark::DoNotOptimize(sum);
  // Items count on the consumer side only: items_per_second is pops per second.
  if (!producer) state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete g_shared_ring;
    g_shared_ring = nullptr;
  }
}
BENCHMARK(BM_Throughput)->Name("BM_Throughput/1P1C")->Threads(2)->UseRealTime();
BENCHMARK(BM_Throughput)->Name("BM_Throughput/2P2C")->Threads(4)->UseRealTime();

// Ping-pong: this thread pushes a token into `there`, an echo thread spinning on `there`
// pops it and pushes it into `back`, and this thread spins on `back` for it. Real time per
// iteration (the Time column) is nanoseconds per round trip: two hand-offs, each with the cache-line
// transfers a push on one core and a pop on another cost.
void BM_PingPong(benchmark::State& state) {
  constexpr std::uint64_t kStop = std::numeric_limits<std::uint64_t>::max();
  MpmcRing<std::uint64_t> there(2), back(2);
  std::thread echo([&] {
    for (;;) {
      const std::uint64_t v = pop_spin(there);
      if (v == kStop) return;
      push_spin(back, v);
    }
  });
  std::uint64_t i = 0;
  for (auto _ : state) {
    push_spin(there, i);
    const std::uint64_t v = pop_spin(back);
    if (v != i) {
      state.SkipWithError("ping-pong: a token came back changed");
      break;
    }
    ++i;
  }
  push_spin(there, kStop);
  echo.join();
  state.SetItemsProcessed(state.iterations());  // round trips per second
}
BENCHMARK(BM_PingPong)->Name("BM_PingPong/round_trip")->UseRealTime()->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
