// exercises/04-one-generation: a callback loop cut down to its ready queue and its poll; the
// turn to write.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>

namespace exercise {

using Callback = std::function<void()>;

/// Chapter 04's EventLoop (code/evloop/event_loop.h) without timers, handles or other
/// threads: a FIFO of ready callbacks and readers on real descriptors, polled with poll(2).
/// One thread does everything. A turn (run_once) polls the descriptors and runs callbacks;
/// which callbacks, and whether the poll may wait, is the exercise.
class TurnLoop {
 public:
  /// `park_limit`: the longest a poll allowed to block waits (a real loop waits until its
  /// next timer or for ever; here nothing else can end a wait, so a wrong wait costs time
  /// in a test rather than a hang).
  explicit TurnLoop(std::chrono::milliseconds park_limit = std::chrono::milliseconds(1000));

  // ---- given (turn_loop.cpp)

  /// Queue `cb` behind every callback already queued.
  void call_soon(Callback cb);
  /// Run `cb` each turn `fd` is readable: every poll that finds it readable queues `cb`
  /// (level-triggered, as asyncio's add_reader). One reader per descriptor.
  void add_reader(int fd, Callback cb);
  /// Returns whether a reader was registered. A readiness already queued no longer runs.
  bool remove_reader(int fd);
  /// End the run after the current turn: what that turn runs still runs, what it schedules
  /// waits for the next run (asyncio's loop.stop()). Before a run: the run is one turn.
  void stop() noexcept { stopping_ = true; }
  /// Turns until stop(), then clear the stop.
  void run_forever();

  // ---- the turn

  /// THE EXERCISE (starter/, solution/): one turn. Poll the descriptors (poll_step), then
  /// run callbacks (run_front). The poll may block only when nothing is ready and no stop is
  /// pending; the turn runs exactly the callbacks that were queued when its poll returned
  /// (asyncio's _run_once), so a callback one of them schedules waits for the next turn,
  /// after the next poll.
  void run_once();

  // ---- counts, for tests

  /// Polls that were allowed to block (poll_step(true)), whether or not they waited.
  std::uint64_t blocking_polls() const noexcept { return blocking_polls_; }
  /// Callbacks queued and not yet run.
  std::size_t ready() const noexcept { return ready_.size(); }

 private:
  /// Given: poll(2) every reader's descriptor, waiting up to park_limit if `block`, else
  /// not at all, and queue the reader of each readable one (behind what is queued).
  void poll_step(bool block);
  /// Given: pop the front callback and run it (the queue must not be empty).
  void run_front();

  std::deque<Callback> ready_;
  std::map<int, Callback> readers_;
  const std::chrono::milliseconds park_limit_;
  std::uint64_t blocking_polls_ = 0;
  bool stopping_ = false;
};

}  // namespace exercise
