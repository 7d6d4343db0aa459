// evloop/event_loop: a callback event loop on the reactor: call_soon, timers, readiness
// callbacks, thread-safe posts, and a switch between two turn shapes (chapter 04).
#include "evloop/event_loop.h"

#include <sys/epoll.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <utility>

namespace handoff::evloop {

namespace {

std::int64_t to_ns(EventLoop::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

// The wake flag's socket as the reactor sees it.
//
// Wakes are read off the wake flag's socket in the reactor's dispatch; the posts they
// announce are taken by the turn, after the poll.
struct EventLoop::WakeReader final : reactor::IoHandler {
  WakeReader(reactor::WakeFlag& wake, EventLoopCounts& counts) : wake_(wake), counts_(counts) {}
  void on_io(std::uint32_t) override {
    wake_.take_poke(nullptr);
    ++counts_.pokes_taken;
  }

  reactor::WakeFlag& wake_;
  EventLoopCounts& counts_;
};

/// One descriptor's reader and writer. Readiness queues the callback (as asyncio's
/// _process_events adds the handle to _ready); it runs in the turn's run, not in dispatch.
struct EventLoop::FdWatch final : reactor::IoHandler {
  explicit FdWatch(ReadyQueue& r) : ready(r) {}
  void on_io(std::uint32_t events) override {
    if (reader && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) ready.push_local(reader);
    if (writer && (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) ready.push_local(writer);
  }
  ReadyQueue& ready;
  HandlePtr reader, writer;
  bool registered = false;
};

EventLoop::EventLoop(EventLoopOptions options, EventLoopSeams seams)
    : options_(std::move(options)),
      seams_(std::move(seams)),
      wake_handler_(std::make_unique<WakeReader>(wake_, counts_)) {
  reactor_.add(wake_.loop_fd(), EPOLLIN, wake_handler_.get());
  if (options_.hand_in == HandIn::coordinator) coordinator_ = std::make_unique<Coordinator>(posts_, wake_);
}

EventLoop::~EventLoop() = default;

// ---------------------------------------------------------------- scheduling

Handle EventLoop::call_soon(Callback cb) {
  auto state = HandlePtr::make(std::move(cb), owner_);
  ready_.push_local(state);
  return Handle(std::move(state));
}

// [evloop.time]
std::int64_t EventLoop::clock_ns() noexcept { return to_ns(Clock::now()); }

std::int64_t EventLoop::now_ns() {
  // One clock read per turn at most: the poll's, else the first caller's. Outside a run
  // nothing would clear it, so every call reads.
  if (!now_fresh_ || options_.timer_clock == TimerClock::per_call) {
    now_ns_ = clock_ns();
    now_fresh_ = running_;
  }
  return now_ns_;
}

EventLoop::Clock::time_point EventLoop::time() {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(now_ns())));
}

void EventLoop::update_time() noexcept {
  now_ns_ = clock_ns();
  now_fresh_ = running_;
}

Handle EventLoop::call_later(Clock::duration delay, Callback cb) {
  auto state = HandlePtr::make(std::move(cb), owner_);
  timers_.push(now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(delay).count(), state);
  return Handle(std::move(state));
}
// [evloop.time]

Handle EventLoop::call_at(Clock::time_point when, Callback cb) {
  auto state = HandlePtr::make(std::move(cb), owner_);
  timers_.push(to_ns(when), state);
  return Handle(std::move(state));
}

// [evloop.threadsafe]
Handle EventLoop::call_soon_threadsafe(Callback cb) {
  // Its caller's Handle is dropped on the caller's thread: counted atomically.
  auto state = HandlePtr::make(std::move(cb), HandleState::Holders::any_thread);
  if (coordinator_) {
    coordinator_->submit(state, ready_);  // marked now; the coordinator thread hands it in
    return Handle(std::move(state));
  }
  posts_.push(state, ready_);  // marked with the loop's local count (ReadyQueue's rule)
  // The push, then the fence and the loop's flag (reactor/wake_flag.cpp): one poke, only for
  // a loop that announced its wait. The counter is unused: no ThreadStats on this thread.
  wake_.poke_if_waiting(nullptr, stats::Counter::wakes_sent);
  return Handle(std::move(state));
}
// [evloop.threadsafe]

// ---------------------------------------------------------------- descriptors

void EventLoop::add_reader(int fd, Callback cb) { watch(fd, &FdWatch::reader, std::move(cb)); }
bool EventLoop::remove_reader(int fd) { return unwatch(fd, &FdWatch::reader); }
void EventLoop::add_writer(int fd, Callback cb) { watch(fd, &FdWatch::writer, std::move(cb)); }
bool EventLoop::remove_writer(int fd) { return unwatch(fd, &FdWatch::writer); }

void EventLoop::watch(int fd, HandlePtr FdWatch::*slot, Callback cb) {
  auto& w = watches_[fd];
  if (!w) w = std::make_unique<FdWatch>(ready_);
  auto& handle = (*w).*slot;
  if (handle) Handle(handle).cancel();  // replaced: a readiness already queued will not run
  handle = HandlePtr::make(std::move(cb), owner_);
  handle->repeating = true;
  update_fd(fd);
}

bool EventLoop::unwatch(int fd, HandlePtr FdWatch::*slot) {
  auto it = watches_.find(fd);
  if (it == watches_.end() || !((*it->second).*slot)) return false;
  Handle(std::move((*it->second).*slot)).cancel();  // leaves the slot empty; a readiness already queued will not run
  update_fd(fd);
  return true;
}

void EventLoop::update_fd(int fd) {
  auto& w = watches_.at(fd);
  const std::uint32_t events = (w->reader ? EPOLLIN : 0u) | (w->writer ? EPOLLOUT : 0u);
  if (events == 0) {
    if (w->registered) reactor_.remove(fd, w.get());
    watches_.erase(fd);  // never during dispatch: readiness only queues, callbacks run later
  } else if (!w->registered) {
    reactor_.add(fd, events, w.get());
    w->registered = true;
  } else {
    reactor_.modify(fd, events, w.get());
  }
}

// ---------------------------------------------------------------- running

void EventLoop::run_forever() { run_until(nullptr); }

template <class Body>
void EventLoop::run_guarded(Body body) {
  if (running_) throw std::logic_error("EventLoop: already running");
  running_ = true;
  owner_.enter();
  /// Clears the running and stopping flags however run() ends.
  struct Reset {
    EventLoop& loop;
    ~Reset() {
      loop.running_ = false;
      loop.owner_.leave();
      loop.stopping_ = false;  // asyncio's run_forever: finally: self._stopping = False
      loop.todo_ = 0;
      loop.max_wait_ms_ = -1;
      loop.now_fresh_ = false;  // outside a run, the loop's time is the clock's
    }
  } reset{*this};
  body();
}

void EventLoop::run_until(const std::function<bool()>& done) {
  run_guarded([&] {
    for (;;) {
      turn();
      if (stopping_) return;  // asyncio's run_forever: _run_once(), then break if _stopping
      if (done && done()) return;
    }
  });
}

void EventLoop::run_once(int max_wait_ms) {
  run_guarded([&] {
    max_wait_ms_ = max_wait_ms;
    turn();
  });
}

void EventLoop::turn() {
  if (options_.turn == TurnShape::generation) {
    turn_generation();
  } else {
    turn_drain();
  }
}

void EventLoop::stop() {
  stopping_ = true;
  // A drain turn would go on taking batches; it ends with what was scheduled before the
  // stop. A generation already ran only its ntodo: nothing to change.
  if (running_ && options_.turn == TurnShape::drain) todo_ = ready_.size();
}

// [evloop.turns]
void EventLoop::turn_generation() {
  // asyncio's _run_once: poll, collect, then run ntodo = what is ready now.
  ++counts_.turns;
  poll_and_collect();
  todo_ = ready_.size();
  run_budget();
}

void EventLoop::turn_drain() {
  // Seed 003's before: run to quiescence in batches, then poll.
  ++counts_.turns;
  std::size_t ran = 0;
  for (;;) {
    take_posts();
    todo_ = std::min({ready_.size(), kDrainBatch, kDrainCap - ran});
    if (todo_ == 0) break;
    ran += todo_;
    run_budget();
    if (stopping_) break;
  }
  poll_and_collect();
}
// [evloop.turns]

void EventLoop::run_budget() {
  while (todo_ > 0) {
    --todo_;
    HandlePtr h = ready_.pop_front();
    if (h->cancelled) continue;
    ++counts_.callbacks_run;
    if (h->repeating) {
      const Callback cb = h->callback;  // a copy: the callback may remove its own reader
      cb();
    } else {
      const Callback cb = std::move(h->callback);  // runs once; a cancel() from inside is a no-op
      cb();
    }
  }
}

// [evloop.poll]
void EventLoop::poll_and_collect() {
  int timeout = wait_timeout_ms();
  const auto cap = [&timeout](int limit) {
    if (limit >= 0 && (timeout < 0 || limit < timeout)) timeout = limit;
  };
  cap(max_wait_ms_);
  if (hooks_ != nullptr) {
    // A poll that will not block asks the hooks for no wait: a pool's loop spin before
    // it would delay the ready callbacks for nothing.
    if (timeout == 0) {
      hooks_->before_nonblocking_poll();
      ++counts_.nonblocking_hook_calls;
    } else {
      cap(hooks_->before_poll());
    }
  }
  if (timeout != 0 && options_.wake_spin.spin_ns > 0 &&
      sync::spin_until(options_.wake_spin, [this] { return !posts_.empty(); })) {
    ++counts_.spin_catches;  // the post is taken below, after a poll that only looks
    timeout = 0;
  }
  if (timeout != 0 && !park_allowed()) timeout = 0;
  now_fresh_ = false;  // a handler the poll runs (a connection) sets timers from after the wait
  const int n = reactor_.poll(timeout);
  if (timeout != 0) {
    wake_.end_wait();
    ++counts_.blocking_waits;
    if (n == 0 && timeout > 0) ++counts_.wait_timeouts;
  } else {
    ++counts_.nonblocking_polls;
  }
  if (hooks_ != nullptr) hooks_->after_poll(timeout);
  // The turn's time: read by such a handler, else here, else by the turn's first call_later.
  if (timers_.size() != 0) {  // no clock read for a loop without timers
    timers_.pop_due(now_ns(), due_);
    for (auto& h : due_) ready_.push_local(std::move(h));
    due_.clear();
  }
  take_posts();
}
// [evloop.poll]

// [evloop.timeout]
int EventLoop::wait_timeout_ms() {
  timers_.prune();  // a cancelled timer at the top no longer sets the timeout
  if (!ready_.empty() || stopping_) return 0;
  const auto deadline = timers_.next_deadline();
  if (!deadline) return -1;
  const std::int64_t left_ns = *deadline - clock_ns();  // the clock now: the wait starts now
  if (left_ns <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>((left_ns + 999'999) / 1'000'000, INT_MAX));  // round up
}

bool EventLoop::park_allowed() {
  // The two steps and their order: evloop/event_loop_wait.h (the model runs the same).
  const auto& hook = seams_.between_park_steps;
  return may_block(
      seams_.park_order, wake_, posts_,
      [&hook] {
        if (hook) hook();
      },
      counts_.wait_announcements);
}
// [evloop.timeout]

void EventLoop::take_posts() {
  posts_.take(taken_);
  ready_.merge(taken_);
}

}  // namespace handoff::evloop
