// pool/ring_pool: the loop↔pool hand-off in memory: Vyukov rings, spin-then-park, and
// a wake only for a thread that said it was parked (chapter 02).
// Role: move jobs and frames through MpmcRings so that the common case costs no syscall
// on either side; keep the socketpairs only for payload messages (the poison pill) and as
// the wake, sent only to a receiver that announced it is about to block.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "net/fd.h"
#include "pool/handler_pool.h"
#include "sync/mpmc_ring.h"
#include "sync/spin_wait.h"

namespace handoff::pool {

struct RingPoolOptions {
  sync::SpinPolicy spin{};               ///< POOL_SPIN_NS: 10 µs, yielding after 2 µs
  std::int64_t dgram_poll_ns = 100'000;  ///< POOL_DGRAM_POLL_NS: a busy thread still sees a pill
  std::size_t ring_capacity = 1024;      ///< per ring; a power of two
  /// The loop's own spin before it parks, while jobs it submitted are still out: 0 (off)
  /// keeps the seed's design. On, the loop polls the completion ring for up to this long
  /// instead of parking and being poked (chapter 02 measures it; chapter 04 asks what it
  /// costs when the completions come from threads holding something the loop needs).
  sync::SpinPolicy loop_spin{0, 0};

  /// The order of the two steps of a park. Only announce_then_recheck is correct; the
  /// reverse is kept, selectable, as the negative control the lost-wakeup tests catch.
  enum class ParkOrder { announce_then_recheck, recheck_then_announce };
  ParkOrder park_order = ParkOrder::announce_then_recheck;

  /// A test hook run between the park's two steps (empty in production). A test blocks a
  /// thread here to make a race that happens once in a thousand runs happen every time.
  std::function<void()> between_park_steps;
};

/// The chapter 02 pool, as the seed first built it: one lane (a job ring shared by all the
/// pool's threads, and one wake socketpair they all park on) and one completion ring with
/// the loop's own wake socketpair.
///
/// The two protocols, each a store then a load on one side against a store then a load on
/// the other (the store-buffering shape, which needs a seq_cst fence on both sides):
///   pool thread: announce parked → fence → re-check the ring → block in recv
///   submit:      push the job    → fence → read the parked count → poke if it exceeds
///                                          the wakes already in flight
///   loop:        raise its flag  → fence → re-check the completion ring → epoll_wait
///   complete:    push the frame  → fence → read the flag → poke if it was raised
/// In each pair at least one side sees the other's store, so no wake is lost.
///
/// Known hole, left in on purpose (chapter 03): a woken thread polls the shared lane socket
/// on its way back to the ring and can consume the wake sent for a sibling. The sibling
/// stays parked while a job waits in the ring.
class RingPool final : public HandlerPool {
 public:
  RingPool(const PoolConfig& config, RingPoolOptions options = {});
  ~RingPool() override;

  void bind(loop::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
            stats::ThreadStats& loop_stats) override;
  void submit(Job* job) override;
  bool ready_to_wait() override;
  void after_wait() override;
  void stop() override;

  /// Threads currently announced parked (for tests and the harness).
  int parked() const noexcept { return parked_.load(std::memory_order_relaxed); }
  /// Whether the loop has raised its flag to wait (for tests: a snapshot, ordered by nothing).
  bool loop_waiting() const noexcept { return loop_waiting_.load(std::memory_order_relaxed); }

 private:
  enum : std::uint64_t { kPoke = 1, kPill = 2 };
  struct Endpoint final : loop::IoHandler {
    RingPool* pool = nullptr;
    void on_io(std::uint32_t) override { pool->drain_loop_pokes(); }
  };
  void thread_main(stats::ThreadStats& stats);
  bool poll_lane(stats::ThreadStats& stats);
  Job* park(stats::ThreadStats& stats, bool& pill);
  void run(stats::ThreadStats& stats, Job* job);
  void complete(stats::ThreadStats& stats, Frame* frame);
  void wake_one_if_parked(stats::ThreadStats& stats);
  void flush_backlog();
  void drain_completions();
  void drain_loop_pokes();

  PoolConfig config_;
  RingPoolOptions options_;
  sync::MpmcRing<Job*> jobs_;
  sync::MpmcRing<Frame*> done_;
  net::Fd lane_loop_, lane_pool_;  // pokes and pills: loop → pool threads
  net::Fd done_loop_, done_pool_;  // pokes: pool threads → loop
  // Each word is written by one side and read by the other on every hand-off: keep each
  // on its own cache line so the two do not falsely share.
  alignas(64) std::atomic<int> parked_{0};           // threads that announced they will block
  alignas(64) std::atomic<int> wakes_in_flight_{0};  // pokes sent to the lane, not yet taken
  alignas(64) std::atomic<bool> loop_waiting_{false};
  alignas(64) std::atomic<int> running_{0};
  loop::Reactor* reactor_ = nullptr;
  FrameSink* sink_ = nullptr;
  stats::ThreadStats* loop_stats_ = nullptr;
  Endpoint done_endpoint_;
  std::deque<Job*> backlog_;   // jobs the ring could not take yet (loop thread only)
  std::size_t in_flight_ = 0;  // jobs submitted whose last frame has not come back (loop only)
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace handoff::pool
