// pool/elastic_pool: the ring hand-off with the elastic rules: one idle spinner, a wake only
// for an all-parked lane, the loop's age check, and a wake channel per thread (chapter 03).
// Changed in chapter 04: the idle spinner's backoff (sync/spin_backoff).
// Role: hand jobs to as many threads as the load needs and no more: a burst into a parked
// lane wakes one thread, a thread stuck in a long handler is covered by the loop waking a
// sibling once the ring stops draining, and a wake reaches the thread it was meant for.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "pool/elastic_pool_park.h"
#include "pool/handler_pool.h"
#include "pool/ring_loop.h"
#include "sync/spin_backoff.h"
#include "sync/spin_wait.h"
#include "sync/wake_channel.h"

namespace handoff::pool {

/// The elastic pool's spinner, ring and age check: what a user sets.
struct ElasticPoolOptions {
  sync::SpinPolicy spin{};           ///< the lane's one idle spinner: 10 µs, yielding after 2 µs
  /// Chapter 04: the idle spinner skips spins after spins that missed (sync/spin_backoff).
  /// Off by default, so chapter 03's pool spins after every job, as it always did.
  bool spin_backoff = false;
  std::size_t ring_capacity = 1024;  ///< per ring; a power of two
  /// Rule 3, T: the loop wakes a parked thread when jobs wait in the ring and its pop
  /// counter has not moved for longer than this.
  std::int64_t age_ns = 200'000;
  /// While jobs wait in the ring and a thread is parked, the loop's wait is capped at this,
  /// so an idle loop still runs its age check.
  int pending_wait_ms = 1;

  /// false: rule 3 off, the loop runs no age check and its wait is not capped
  /// (`--pool-age-us 0`): the arm that prices rule 3, and the negative control that shows a
  /// job behind busy threads waiting for one of them.
  bool age_check = true;
};

/// The elastic pool's test seams: what a test sets to force a window or select a negative
/// control. Production code never sets it; the defaults are the correct protocol.
struct ElasticPoolSeams {
  /// FOR TESTS ONLY. false: submit wakes nobody, even into an all-parked lane, so that only
  /// the age check can start a thread (the forced situation its test needs).
  bool submit_wakes = true;
  /// The order of a park's two steps (pool/elastic_pool_park.h). FOR TESTS ONLY:
  /// recheck_then_announce is the broken order, kept as the negative control of the park's
  /// forced-window test: a push that lands between the re-check and the announcement reads
  /// a lane not all parked, wakes nobody, and the thread sleeps with the job in the ring.
  using ParkOrder = pool::ParkOrder;
  ParkOrder park_order = ParkOrder::announce_then_recheck;
  /// A test hook run by a parking thread between its two steps (with the correct order:
  /// after announcing PARKED and its fence, before the re-check). Empty in production.
  std::function<void()> between_park_steps;
};

/// The chapter 03 pool: one idle spinner per lane, a wake only when all are parked.
///
/// A pool of handler threads behind one job ring (a lane) and one completion ring, with
/// four rules (from the design record that followed seed 000's, restated as fact F2 on the
/// book's sources page, book/sources.md):
///
///  1. One idle spinner per lane: a thread that finds the ring empty spins only if no
///     sibling already spins idle; otherwise it parks at once.
///  2. submit wakes nobody while any thread is running or spinning (it will come back to the
///     ring); only when every thread is parked, exactly one. The wake lowers the parked
///     count before the loop's next push looks, so a burst into a parked lane wakes one.
///  3. The age check: once per loop pass, with jobs waiting in the ring, the loop reads the
///     ring's pop counter; if it has not moved for longer than T (age_ns), the loop wakes one
///     parked thread. While jobs wait and a thread is parked, the loop's wait is capped
///     (max_wait_ms()).
///  4. A wake channel per thread (sync/wake_channel.h): the loop wakes the parked thread
///     that parked last (warm caches), by a CAS on that thread's own state word.
///
/// The park against submit's and stop's wakes, with its fences and who lowers the parked
/// count, is pool/elastic_pool_park.h (the relaxed-memory model runs the same code).
///
/// Cost: a job taken by a running or spinning thread costs no syscall on either side; a
/// park costs a FUTEX_WAIT and its wake a FUTEX_WAKE. The loop reads the pop counter and
/// the clock once per pass while jobs wait.
///
/// Shutdown: stop(deadline) runs what was submitted until the deadline, then drops what has
/// not started and lets go of threads stuck in a handler (pool/handler_slot.h). The stop is
/// a flag, not a message: a thread exits when its park finds the flag raised and the ring
/// empty.
class ElasticPool final : public HandlerPool {
 public:
  ElasticPool(const PoolConfig& config, ElasticPoolOptions options = {}, ElasticPoolSeams seams = {});
  ~ElasticPool() override;

  void bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
            stats::ThreadStats& loop_stats) override;
  void submit(Job* job) override;
  bool ready_to_wait() override;
  void before_nonblocking_poll() override;
  void after_wait() override;
  int max_wait_ms() override;
  std::size_t stop(std::int64_t deadline_ns) override;

  /// Threads counted parked (for tests and the harness: a snapshot, ordered by nothing).
  int parked() const noexcept;
  /// Thread `i`'s state (for tests: a snapshot).
  sync::WakeChannel::Kind thread_state(int i) const noexcept;
  /// Whether the loop has raised its flag to wait (for tests: a snapshot).
  bool loop_waiting() const noexcept;

 private:
  struct Core;
  /// The loop's wake socket as the reactor sees it.
  struct Endpoint final : reactor::IoHandler {
    ElasticPool* pool = nullptr;
    void on_io(std::uint32_t) override;
  };
  void push_backlog();
  void wake_if_all_parked();
  void check_age();
  bool jobs_waiting() const noexcept;

  PoolConfig config_;
  std::shared_ptr<Core> core_;  // what the threads touch: shared, so a let-go thread keeps it
  RingLoop loop_;               // reactor, sink, loop stats, backlog, threads (pool/ring_loop.h)
  Endpoint done_endpoint_;
  std::uint64_t pushed_ = 0;         // jobs pushed into the ring (loop thread only)
  std::uint64_t last_pops_ = 0;      // the pop counter at the age check's last look
  std::int64_t standing_since_ = 0;  // when the pop counter was last seen to move; 0: not timing
};

}  // namespace handoff::pool
