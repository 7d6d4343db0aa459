// evloop/loop_owner: which thread may copy and drop a loop's loop-thread Handles now, and a
// debug build's check of it (chapter 04).
// Role: the contract of HandleState::Holders::loop_thread (evloop/handle.h) made a check that
// fails at once. A loop-thread handle is counted with a plain load and store, so a copy or a
// drop on any other thread than the one running its loop loses a count (a leak, or a state
// freed twice onto two threads' caches). A checked build (NDEBUG undefined: the debug and
// tsan presets) keeps a record of the thread running the loop, shared by the loop and each
// of its loop-thread handles, and ends the program with a message naming the contract when
// such a handle is copied or dropped elsewhere while the loop runs. A release build keeps
// nothing and checks nothing: the class is empty and its calls inline to nothing.
#pragma once

// Not in a Relacy model (code/relacy), whose threads are fibers of one thread: a thread's id
// tells them apart no more than it would tell the loop's callbacks apart.
#if !defined(NDEBUG) && !defined(RL_RELACY_HPP)
#define HANDOFF_LOOP_OWNER_CHECKED 1
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#endif
#include <type_traits>

namespace handoff::evloop {

/// The thread that owns a loop's thread-only state: the thread running the loop, while it
/// runs; while it does not run, any thread, which the program orders after the run's end
/// (a join, a lock) as it must for every other use of the loop's thread-only state.
///
/// A loop holds one made by make(); each of its loop-thread handle states holds a copy
/// (copies share one record, so a handle that outlives its loop still checks against it,
/// and finds it not running). A default-made one belongs to no loop and allows every
/// thread. Cost: in a release build none (an empty class); in a checked build a shared
/// record per loop and a reference to it per handle state, and one relaxed load and a
/// thread id per check.
class LoopOwner {
 public:
  /// A loop's own: a new record, with no thread running the loop.
  static LoopOwner make() {
    LoopOwner owner;
#ifdef HANDOFF_LOOP_OWNER_CHECKED
    owner.record_ = std::make_shared<Record>();
#endif
    return owner;
  }

  /// The calling thread starts running the loop (at a run's start, before its first turn).
  void enter() noexcept {
#ifdef HANDOFF_LOOP_OWNER_CHECKED
    // relaxed: read by check() on this thread (program order), or on another thread that
    // breaks the contract, where a stale read only misses that one break.
    if (record_) record_->running.store(std::this_thread::get_id(), std::memory_order_relaxed);
#endif
  }
  /// The run ends (however it ends, on the thread that entered).
  void leave() noexcept {
#ifdef HANDOFF_LOOP_OWNER_CHECKED
    // relaxed: a thread that touches the loop's handles after the run orders itself after
    // this store (the join or lock the contract asks of it), so coherence gives it this
    // value or a later one, never the running id: no false alarm without a real break.
    if (record_) record_->running.store(std::thread::id(), std::memory_order_relaxed);
#endif
  }

  // [loop_owner.check]
  /// Ends the program, naming the contract, when the loop runs on a thread other than the
  /// calling one. `what`: what the caller did ("copied", "dropped", ...).
  void check(const char* what) const noexcept {
#ifdef HANDOFF_LOOP_OWNER_CHECKED
    if (!record_) return;  // no loop's: checks nothing
    // relaxed: see enter() and leave(): the loop's own thread reads its own store, and
    // a thread after the run reads the cleared id.
    const std::thread::id running = record_->running.load(std::memory_order_relaxed);
    if (running == std::thread::id() || running == std::this_thread::get_id()) return;
    std::fprintf(stderr,
                 "handoff::evloop: a loop-thread Handle was %s on a thread that is not running its loop "
                 "(the contract of HandleState::Holders::loop_thread, evloop/handle.h): carry it across "
                 "threads in an evloop::HandleCarrier (evloop/handle_carrier.h)\n",
                 what);
    std::abort();
#else
    (void)what;
#endif
  }
  // [loop_owner.check]

 private:
#ifdef HANDOFF_LOOP_OWNER_CHECKED
  /// The thread running the loop; the default id while it does not run.
  struct Record {
    std::atomic<std::thread::id> running{};
  };
  std::shared_ptr<Record> record_;
#endif
};

#ifndef HANDOFF_LOOP_OWNER_CHECKED
// What makes the release build's check free: no member (its holders mark it
// [[no_unique_address]]), and calls whose bodies are empty.
static_assert(std::is_empty_v<LoopOwner>);
#endif

}  // namespace handoff::evloop
