// pool/ring_pool: the loop↔pool hand-off in memory: Vyukov rings, spin-then-park, and
// a wake only for a thread that said it was parked (chapter 02; the chained wake, chapter 03).
// Changed in chapter 03: the chained wake policy, the stolen credit's return and the completion ring.
// Role: move jobs and frames through MpmcRings so that the common case costs no syscall
// on either side; keep the socketpairs only for payload messages (the poison pill) and as
// the wake, sent only to a receiver that announced it is about to block.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

#include "net/fd.h"
#include "pool/handler_pool.h"
#include "pool/ring_loop.h"
#include "pool/wait_word.h"
#include "sync/announce_order.h"
#include "sync/mpmc_ring.h"
#include "sync/spin_wait.h"

namespace handoff::pool {

/// The ring pool's spin, rings, loop-side settings and wake policy: what a user sets.
struct RingPoolOptions {
  sync::SpinPolicy spin{};               ///< POOL_SPIN_NS: 10 µs, yielding after 2 µs
  std::int64_t dgram_poll_ns = 100'000;  ///< POOL_DGRAM_POLL_NS: a busy thread still sees a pill
  std::size_t ring_capacity = 1024;      ///< per ring; a power of two
  /// The loop's own spin before it parks, while jobs it submitted are still out: 0 (off)
  /// keeps the seed's design. On, the loop polls the completion ring for up to this long
  /// instead of parking and being poked (chapter 02 measures it; chapter 04 asks what it
  /// costs when the completions come from threads holding something the loop needs).
  sync::SpinPolicy loop_spin{0, 0};

  /// Where a parked thread's wakes come from (chapter 03). shared (chapter 02's pool, the
  /// default): from submit alone, one per parked thread; a poke that a busy thread's lane
  /// poll eats is gone, and the sibling it was sent for sleeps on while a job waits (the
  /// stolen credit, kept as the negative control). chained: also from a thread that takes
  /// a job and still sees work in the ring: it passes one wake on by submit's own rule.
  enum class WakePolicy { shared, chained };
  WakePolicy wake_policy = WakePolicy::shared;
};

/// The ring pool's test seams: what a test sets to force a window or select a negative
/// control. Production code never sets it; the defaults are the correct protocol.
struct RingPoolSeams {
  /// The order of the two steps of a park. Only announce_then_recheck is correct; the
  /// reverse is kept, selectable, as the negative control the lost-wakeup tests catch.
  using ParkOrder = pool::ParkOrder;  // pool/wait_word.h, where the two steps live
  ParkOrder park_order = ParkOrder::announce_then_recheck;

  /// A test hook run between the park's two steps (empty in production). A test blocks a
  /// thread here to make a race that happens once in a thousand runs happen every time.
  std::function<void()> between_park_steps;

  /// How a woken thread leaves the parked count and gives back its wake's credit. Only
  /// together (one atomic step) is correct; parked_then_credit, two steps with the parked
  /// count lowered first, is the lifecycle review's second lost wake, kept as a negative control.
  enum class UnparkOrder { together, parked_then_credit };
  UnparkOrder unpark_order = UnparkOrder::together;
  /// A test hook run by a woken thread right after it has lowered the parked count (in
  /// parked_then_credit, before it gives back the credit). Empty in production.
  std::function<void()> after_unpark_step;

  /// A test hook run by a parking thread whose re-check found the ring empty, just before it
  /// blocks in recv: held there, it counts as parked but cannot yet read a poke. Empty in
  /// production.
  std::function<void()> before_park_recv;

  /// FOR TESTS ONLY. false: a thread's non-blocking lane poll only looks (MSG_PEEK) and
  /// leaves pokes for the parked thread they were sent for, so a test can see the unpark
  /// race without chapter 02's stolen-credit hole in front of it (a busy thread then sees a
  /// pill only when it next parks). true (the default) keeps chapter 02's design, hole and all.
  bool lane_poll_takes_pokes = true;

  /// How a lane poll that ate a poke gives its credit back (pool/wait_word.h). Only fenced
  /// is correct; relaxed_only is the negative control, refuted by the relaxed-memory model
  /// (code/relacy/ring_pool_model.cpp). On x86 the two run alike: the locked fetch_sub is a
  /// full barrier, so no run-time test can tell them apart.
  CreditReturn credit_return = CreditReturn::fenced;

  /// The order of the loop's two steps before it waits (raise its flag, re-check the
  /// completion ring; sync/announce_order.h). The reverse is the loop side's negative
  /// control.
  using LoopOrder = sync::AnnounceOrder;
  LoopOrder loop_order = LoopOrder::announce_then_recheck;
  /// A test hook run on the loop thread between those two steps. Empty in production.
  std::function<void()> between_loop_wait_steps;
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
///   loop:        raise its flag  → fence → re-check the completion ring (and push what
///                                          its backlog holds, if the job ring has room)
///                                          → epoll_wait
///   complete:    push the frame  → fence → read the flag → poke if it was raised
///   (a job dropped unrun: pop    → fence → read the flag → poke if it was raised)
/// In each pair at least one side sees the other's store, so no wake is lost. A full job
/// ring rides on the second protocol: every pop that makes room is followed, on the same
/// thread, by a frame or a drop and its fence, so a loop that found no room is poked when
/// the job that made it ends; meanwhile the ring still holds capacity - 1 jobs for the threads.
///
/// The parked count and the wakes in flight share one atomic word, so a waker reads a
/// consistent pair and a woken thread leaves both in one step (RingPoolSeams::UnparkOrder).
///
/// The known hole (chapter 03), kept as WakePolicy::shared: a woken thread polls the shared
/// lane socket on its way back to the ring (poll_lane) and can consume the poke sent for a
/// sibling (counted as stolen_pokes). The sibling stays parked with no poke coming while a
/// job waits in the ring, until a busy thread comes back for it. WakePolicy::chained closes
/// it: a thread that takes a job and still sees work in the ring, with parked siblings and
/// no wake on its way to them, pokes one (counted as chained_wakes), so a stolen credit is
/// passed on by the thread that stole it. The price: a look at the ring and at the wait
/// word after every pop that leaves work behind.
///
/// Shutdown: stop(deadline) runs what was submitted until the deadline, then drops what
/// has not started and lets go of threads stuck in a handler (pool/handler_slot.h); what
/// those threads touch lives in a core they share, so it outlives the pool.
class RingPool final : public HandlerPool {
 public:
  RingPool(const PoolConfig& config, RingPoolOptions options = {}, RingPoolSeams seams = {});
  ~RingPool() override;

  void bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
            stats::ThreadStats& loop_stats) override;
  void submit(Job* job) override;
  bool ready_to_wait() override;
  void before_nonblocking_poll() override;
  void after_wait() override;
  std::size_t stop(std::int64_t deadline_ns) override;

  /// Threads currently announced parked (for tests and the harness).
  int parked() const noexcept;
  /// Whether the loop has raised its flag to wait (for tests: a snapshot, ordered by nothing).
  bool loop_waiting() const noexcept;

 private:
  struct Core;
  /// The loop's wake socket as the reactor sees it: readiness drains the pokes.
  struct Endpoint final : reactor::IoHandler {
    RingPool* pool = nullptr;
    void on_io(std::uint32_t) override { pool->drain_loop_pokes(); }
  };
  void flush_backlog();
  void drain_completions();
  void drain_loop_pokes();

  PoolConfig config_;
  std::shared_ptr<Core> core_;  // what the threads touch: shared, so a let-go thread keeps it
  RingLoop loop_;               // reactor, sink, loop stats, backlog, threads (pool/ring_loop.h)
  Endpoint done_endpoint_;
  // Jobs submitted whose last frame has not come back (loop only). A task (run_in_executor)
  // is not counted: it answers through the loop's own queue, never as a frame.
  std::size_t in_flight_ = 0;
};

}  // namespace handoff::pool
