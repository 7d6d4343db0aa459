// evloop/event_loop: a callback event loop on the reactor: call_soon, timers, readiness
// callbacks, thread-safe posts, and a switch between two turn shapes (chapter 04).
// Role: the loop real servers of asyncio's, libuv's and tokio's shape run on. A turn polls
// reactor::Reactor, moves due timers and thread-safe posts into the ready queue and runs
// callbacks; which callbacks a turn runs is the TurnShape. Semantics follow CPython's
// asyncio (base_events.BaseEventLoop: _run_once, run_forever, stop).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "evloop/coordinator.h"
#include "evloop/event_loop_wait.h"
#include "evloop/handle.h"
#include "evloop/post_queue.h"
#include "evloop/ready_queue.h"
#include "evloop/timer_heap.h"
#include "reactor/reactor.h"
#include "reactor/wake_flag.h"
#include "sync/spin_wait.h"

namespace handoff::evloop {

/// Which callbacks one turn runs.
enum class TurnShape {
  /// asyncio's _run_once: poll (without blocking if callbacks are ready), then run only the
  /// callbacks that were ready when the run started (ntodo); callbacks they schedule wait
  /// for the next turn, after the next poll.
  generation,
  /// Seed 003's "before": run callbacks to quiescence, taking up to kDrainBatch at a time
  /// (callbacks scheduled meanwhile join the next batch), up to kDrainCap per turn, and poll
  /// only then.
  drain,
};

/// How call_soon_threadsafe's posts reach the loop.
enum class HandIn {
  /// Into the loop's post queue, with one poke, only if the loop announced its wait.
  direct,
  /// Seed 003's "before": through a coordinator thread (evloop/coordinator), which then
  /// hands them in as direct does: two thread wake-ups per post when both threads sleep.
  /// Order: as evloop/coordinator.h says (the marks are read at the call, as on direct).
  coordinator,
};

/// What call_later measures its delay from.
enum class TimerClock {
  /// The loop's time (libuv's uv_now): the clock read once per turn, after the poll's wait
  /// (by a handler its dispatch ran, or after it when timers are held, else at the turn's
  /// first call_later). A timer set late in a long turn is due `delay` after that read, so
  /// up to the turn's run time early against the call; EventLoop::update_time() reads the
  /// clock again.
  per_turn,
  /// asyncio's loop.time() + delay: the clock read at every call_later (the chapter's
  /// first version; one clock read per timer).
  per_call,
};

/// A loop's turn shape, timer clock, hand-in and wake spin, set when it is made.
struct EventLoopOptions {
  TurnShape turn = TurnShape::generation;
  TimerClock timer_clock = TimerClock::per_turn;
  HandIn hand_in = HandIn::direct;
  /// Before a wait that could block, poll the post queue this long for a thread-safe post
  /// (seed 003's wake spin, opt-in there after it cost more than it saved; chapter 04 part 2
  /// measures why). {0, 0}: off, the default. The loop never yields its core while it spins.
  sync::SpinPolicy wake_spin{0, 0};
};

/// A loop's test seams: what a test sets to force a window or select a negative control.
/// Production code never sets it; the defaults are the correct protocol.
struct EventLoopSeams {
  /// The order of the loop's two steps before a blocking wait (raise its wake flag,
  /// re-check the post queue; evloop/event_loop_wait.h). Only announce_then_recheck is
  /// correct; the reverse is kept, FOR TESTS ONLY, as the negative control of
  /// call_soon_threadsafe's wake.
  using ParkOrder = WaitOrder;
  ParkOrder park_order = ParkOrder::announce_then_recheck;
  /// A test hook run on the loop thread between those two steps. Empty in production.
  std::function<void()> between_park_steps;
};

/// Work beside the loop's callbacks, run before and after every poll.
///
/// Work that shares the loop's thread and its poll without being a callback, as libuv's
/// prepare and check handles do: a handler pool's completion channel (pool::HandlerPool's
/// ready_to_wait/after_wait), a server's sweep timer and date. Called on the loop thread.
class PollHooks {
 public:
  /// Before every poll of a turn: the longest the poll may wait, in milliseconds (0: it
  /// must not block; -1: no cap from this side).
  virtual int before_poll() = 0;
  /// Instead of before_poll(), on a turn whose poll will not block whatever the hooks say
  /// (callbacks are ready, or the loop stops): prepare nothing for a wait (a pool's loop
  /// spin would only burn the turn). after_poll(0) follows as usual. The default calls
  /// before_poll() and ignores its cap.
  virtual void before_nonblocking_poll() { (void)before_poll(); }
  /// After every poll, whatever ended it; `timeout_ms` is the wait the poll was allowed.
  virtual void after_poll(int timeout_ms) = 0;

 protected:
  ~PollHooks() = default;
};

/// What a loop did, for tests and the harness (loop thread; read when no run is active).
struct EventLoopCounts {
  std::uint64_t turns = 0;
  std::uint64_t callbacks_run = 0;
  std::uint64_t blocking_waits = 0;  ///< polls allowed to block (timeout > 0 or for ever)
  std::uint64_t wait_timeouts = 0;   ///< blocking waits that ended with nothing ready
  std::uint64_t nonblocking_polls = 0;
  std::uint64_t wait_announcements = 0;      ///< times the loop raised its wake flag before a wait
  std::uint64_t pokes_taken = 0;             ///< wakes from call_soon_threadsafe read off the wake socket
  std::uint64_t spin_catches = 0;            ///< waits the wake spin saved: a post came while it spun
  std::uint64_t nonblocking_hook_calls = 0;  ///< turns whose poll hooks were told the poll would not block
};

/// A single-threaded callback loop. Every member is for the loop's thread (the one that
/// calls run_*), except call_soon_threadsafe, which any thread may call at any time.
///
/// Guarantees: call_soon and call_soon_threadsafe callbacks run in scheduling order
/// (ReadyQueue states the rule across threads), kept across stop() and a new run; timers
/// run in deadline order (equal deadlines in scheduling order); a cancelled handle never
/// runs, and a cancelled timer never causes a wake-up. stop() ends the run at the end of the
/// turn that called it: what that turn was going to run still runs, and what it scheduled
/// waits for the next run (asyncio's loop.stop()). A callback that throws ends the run: the
/// exception leaves run_*, and what is still queued runs in the next run. Cost: one handle
/// state per callback (from the thread's cache of freed ones, HandleState::operator new), a
/// clock read per turn that sets a timer, and a lock per call_soon_threadsafe.
class EventLoop {
 public:
  static constexpr std::size_t kDrainBatch = 64;
  static constexpr std::size_t kDrainCap = 1024;

  using Clock = std::chrono::steady_clock;

  explicit EventLoop(EventLoopOptions options = {}, EventLoopSeams seams = {});
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Handle call_soon(Callback cb);
  /// Due `delay` after the loop's time (TimerClock says which read that is).
  Handle call_later(Clock::duration delay, Callback cb);
  Handle call_at(Clock::time_point when, Callback cb);
  /// Any thread: queue `cb` into the loop and wake it if, and only if, it said it waits.
  Handle call_soon_threadsafe(Callback cb);

  /// Run `cb` each turn the descriptor is readable (level-triggered, as asyncio's
  /// add_reader). A second add_reader for the same fd replaces the first (cancelling it).
  void add_reader(int fd, Callback cb);
  /// Returns whether a reader was registered.
  bool remove_reader(int fd);
  void add_writer(int fd, Callback cb);
  bool remove_writer(int fd);

  /// The loop's time: during a run, the clock as the turn last read it (TimerClock::per_turn:
  /// after the poll, or at the turn's first call for it); outside a run, or with
  /// TimerClock::per_call, the clock now.
  Clock::time_point time();
  /// Read the clock into the loop's time now (libuv's uv_update_time), for a callback that
  /// ran long and sets a timer after.
  void update_time() noexcept;

  /// Run turns until stop().
  void run_forever();
  /// Run turns until stop(), or until `done()` holds at the end of a turn.
  void run_until(const std::function<bool()>& done);
  /// End the run at the end of the current turn (before a run: after its first turn).
  void stop();
  /// Run exactly one turn of the loop's shape, its poll waiting at most `max_wait_ms` (-1:
  /// as long as the loop's own timers allow). For a driver that owns the loop's thread and
  /// decides itself when to end (the server's worker); stop() has no effect on it.
  void run_once(int max_wait_ms = -1);

  /// Ask `hooks` before and tell it after every poll (null: nobody). Loop thread, not
  /// during a run.
  void set_poll_hooks(PollHooks* hooks) noexcept { hooks_ = hooks; }
  /// The reactor the loop polls: descriptors whose handlers must run inside the poll's
  /// dispatch (not as callbacks) register here, as the server's connections do.
  reactor::Reactor& reactor() noexcept { return reactor_; }

  TurnShape turn_shape() const noexcept { return options_.turn; }
  const EventLoopCounts& counts() const noexcept { return counts_; }
  std::size_t timers_held() const noexcept { return timers_.size(); }  ///< live and cancelled
  /// The coordinator thread on HandIn::coordinator (its counts), else null.
  const Coordinator* coordinator() const noexcept { return coordinator_.get(); }
  /// Which thread runs the loop now, which a debug build checks its loop-thread handles'
  /// copies and drops against (evloop/loop_owner.h; empty in a release build).
  const LoopOwner& owner() const noexcept { return owner_; }

 private:
  struct FdWatch;
  struct WakeReader;
  template <class Body>
  void run_guarded(Body body);
  void turn();
  void turn_generation();
  void turn_drain();
  void poll_and_collect();
  int wait_timeout_ms();
  bool park_allowed();
  void take_posts();
  void run_budget();
  void watch(int fd, HandlePtr FdWatch::*slot, Callback cb);
  bool unwatch(int fd, HandlePtr FdWatch::*slot);
  void update_fd(int fd);
  std::int64_t now_ns();

  static std::int64_t clock_ns() noexcept;

  EventLoopOptions options_;
  EventLoopSeams seams_;  // the tests' hook and negative control; defaults in production
  reactor::Reactor reactor_;
  reactor::WakeFlag wake_{true, reactor::WakeFlag::Channel::eventfd};  // as libuv's and Asio's loops wake
  ReadyQueue ready_;
  PostQueue posts_;
  TimerHeap timers_;
  std::vector<Post> taken_;                        // reused: posts taken per turn
  std::vector<HandlePtr> due_;  // reused: timers due per turn
  std::unordered_map<int, std::unique_ptr<FdWatch>> watches_;
  std::unique_ptr<WakeReader> wake_handler_;
  EventLoopCounts counts_;
  PollHooks* hooks_ = nullptr;
  int max_wait_ms_ = -1;  // run_once's cap on the poll's wait
  std::size_t todo_ = 0;  // callbacks left to run in the current batch
  std::int64_t now_ns_ = 0;  // the loop's time, while now_fresh_
  bool now_fresh_ = false;   // now_ns_ was read in this turn (cleared before each poll and at a run's end)
  bool running_ = false;
  bool stopping_ = false;
  [[no_unique_address]] LoopOwner owner_ = LoopOwner::make();  // entered and left with running_
  std::unique_ptr<Coordinator> coordinator_;  // last: stopped first, while posts_ and wake_ live
};

}  // namespace handoff::evloop
