// evloop/handle: a callback the event loop will run, and the caller's means to cancel it
// (chapter 04).
// Role: what call_soon, call_later and add_reader give back, as asyncio's Handle and
// TimerHandle do: cancel() before it runs and it never runs; a cancelled timer also tells
// its heap, so that the heap can count its dead entries and compact (evloop/timer_heap).
// The state is counted by its holders (HandlePtr), without an atomic read-modify-write
// unless another thread holds it too: a call_later and its cancel cost no locked
// instruction. A debug build checks that the loop's own handles stay on the loop's thread
// (evloop/loop_owner).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <utility>

#include "evloop/loop_owner.h"

namespace handoff::evloop {

using Callback = std::function<void()>;

class TimerHeap;
class HandlePtr;

/// The state a Handle shares with the queues that hold it. Loop thread only, except that a
/// thread-safe post creates one on its own thread and hands it over through the post queue.
struct HandleState {
  /// Which threads may hold (copy, drop) references to it.
  enum class Holders : std::uint8_t {
    /// The loop's thread only: call_soon, call_later, call_at, readers and writers, and
    /// every copy of their Handles. Counted with plain loads and stores. "The loop's
    /// thread" is the thread running the loop, while it runs, else any thread ordered
    /// after the run (LoopOwner); a debug build aborts a copy or drop anywhere else.
    loop_thread,
    /// Any thread: call_soon_threadsafe's, whose caller drops its Handle on its own thread
    /// while the loop's queues drop theirs. Counted with atomic read-modify-writes.
    any_thread,
  };

  explicit HandleState(Callback&& c, Holders h = Holders::loop_thread, LoopOwner owner = {})
      : callback(std::move(c)), holders_(h), owner_(std::move(owner)) {}
  HandleState(const HandleState&) = delete;
  HandleState& operator=(const HandleState&) = delete;

  /// From the calling thread's cache of freed states (a free list of at most
  /// kCachedPerThread), else from the heap; a state freed on a thread goes back to that
  /// thread's cache. The loop thread makes and frees one per callback and timer.
  static void* operator new(std::size_t size);
  static void operator delete(void* p, std::size_t size) noexcept;
#if defined(__SANITIZE_ADDRESS__) || defined(RL_RELACY_HPP)
  // None under AddressSanitizer, which then sees every use after free, nor in a Relacy model
  // (code/relacy), whose allocator frees each run's memory itself.
  static constexpr std::size_t kCachedPerThread = 0;
#else
  static constexpr std::size_t kCachedPerThread = 256;
#endif

  Callback callback;
  bool cancelled = false;
  bool repeating = false;     ///< a reader or writer: runs at every readiness until removed
  TimerHeap* heap = nullptr;  ///< set while the handle sits in a timer heap

 private:
  friend class HandlePtr;
  std::atomic<std::uint32_t> refs_{1};  // holders; see HandlePtr for the orders
  const Holders holders_;
  [[no_unique_address]] const LoopOwner owner_;  // loop_thread's: its loop's (empty in a release build)
};

namespace detail {

/// A thread's freed handle states, linked through their first bytes. Trivially destructible
/// and constant-initialized, so that reaching it costs no thread-local init check; the
/// thread's FreedStatesReaper, armed at the first state cached, frees them at the thread's
/// exit and marks the cache gone: a state freed after that (a static loop's, at the
/// program's exit) goes straight back to the heap. Inline, so that the models, which link
/// no library, build against the same header.
struct FreedStates {
  struct Node {
    Node* next;
  };
  Node* head = nullptr;
  std::size_t count = 0;
  bool armed = false;  // this thread's reaper is registered
  bool gone = false;   // the reaper ran: cache nothing more
};
inline thread_local constinit FreedStates t_freed{};

struct FreedStatesReaper {
  void arm() noexcept { t_freed.armed = true; }
  ~FreedStatesReaper() {
    FreedStates& freed = t_freed;
    freed.gone = true;
    while (freed.head != nullptr) {
      FreedStates::Node* n = freed.head;
      freed.head = n->next;
      ::operator delete(n);
    }
    freed.count = 0;
  }
};
inline thread_local FreedStatesReaper t_freed_reaper;  // its first use registers its destructor

}  // namespace detail

// [handle.cache]
inline void* HandleState::operator new(std::size_t size) {
  static_assert(sizeof(HandleState) >= sizeof(detail::FreedStates::Node));
  detail::FreedStates& freed = detail::t_freed;
  if (size == sizeof(HandleState) && freed.head != nullptr) {  // none once gone: the reaper emptied it
    detail::FreedStates::Node* n = freed.head;
    freed.head = n->next;
    --freed.count;
    return n;
  }
  return ::operator new(size);
}

inline void HandleState::operator delete(void* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  detail::FreedStates& freed = detail::t_freed;
  if (size == sizeof(HandleState) && freed.count < kCachedPerThread && !freed.gone) {
    if (!freed.armed) detail::t_freed_reaper.arm();  // once per thread
    freed.head = ::new (p) detail::FreedStates::Node{freed.head};
    ++freed.count;
    return;
  }
  ::operator delete(p);
}
// [handle.cache]

/// A counted reference to a HandleState (what std::shared_ptr<HandleState> was, without
/// its control block's atomic counts for the loop thread's own handles). Copy and drop it
/// on the threads its state's Holders allow.
class HandlePtr {
 public:
  HandlePtr() noexcept = default;
  HandlePtr(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor): as shared_ptr's
  /// A new state holding `cb`, with this reference its only holder.
  static HandlePtr make(Callback&& cb, HandleState::Holders h = HandleState::Holders::loop_thread) {
    return HandlePtr(new HandleState(std::move(cb), h));
  }
  /// A new loop-thread state of the loop that `owner` is (EventLoop's scheduling calls):
  /// a debug build checks every copy and drop against it.
  static HandlePtr make(Callback&& cb, const LoopOwner& owner) {
    return HandlePtr(new HandleState(std::move(cb), HandleState::Holders::loop_thread, owner));
  }
  HandlePtr(const HandlePtr& o) noexcept : p_(o.p_) { retain(); }
  HandlePtr(HandlePtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  HandlePtr& operator=(const HandlePtr& o) noexcept {
    HandlePtr(o).swap(*this);
    return *this;
  }
  HandlePtr& operator=(HandlePtr&& o) noexcept {
    HandlePtr(std::move(o)).swap(*this);
    return *this;
  }
  ~HandlePtr() { release(); }

  void swap(HandlePtr& o) noexcept { std::swap(p_, o.p_); }
  void reset() noexcept { HandlePtr().swap(*this); }
  HandleState* get() const noexcept { return p_; }
  HandleState* operator->() const noexcept { return p_; }
  HandleState& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  explicit HandlePtr(HandleState* p) noexcept : p_(p) {}
  // [handle.count]
  void retain() const noexcept {
    if (p_ == nullptr) return;
    if (p_->holders_ == HandleState::Holders::any_thread) {
      // relaxed: a new holder is made from an existing one, which keeps the state alive.
      p_->refs_.fetch_add(1, std::memory_order_relaxed);
    } else {
      p_->owner_.check("copied");  // a debug build's check that it is that one thread
      // relaxed (both): one thread holds every reference; a load and a store, no RMW.
      p_->refs_.store(p_->refs_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }
  void release() noexcept {
    if (p_ == nullptr) return;
    if (p_->holders_ == HandleState::Holders::any_thread) {
      // acq_rel: every holder's use happens before the last one's delete (shared_ptr's order).
      if (p_->refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    } else {
      p_->owner_.check("dropped");
      // relaxed (both): one thread, as in retain().
      const std::uint32_t left = p_->refs_.load(std::memory_order_relaxed) - 1;
      p_->refs_.store(left, std::memory_order_relaxed);
      if (left != 0) return;
    }
    delete p_;
  }
  // [handle.count]

  HandleState* p_ = nullptr;
};

/// A cancellable callback. Copies refer to the same callback. Not thread-safe: cancel() on
/// the loop's thread (as with asyncio's Handle.cancel()); a Handle from anything but
/// call_soon_threadsafe is also copied and dropped there only (HandleState::Holders), which
/// a debug build checks (LoopOwner): a copy or drop on another thread while the loop runs
/// ends the program. Moving one touches no count and is allowed anywhere; to take one to
/// another thread and back (a run_in_executor callable's capture, which its pool thread
/// destroys), carry it in an evloop::HandleCarrier (evloop/handle_carrier.h).
class Handle {
 public:
  Handle() = default;
  explicit Handle(HandlePtr state) : state_(std::move(state)) {}

  /// Cancel: the callback will not run (a no-op once it has run or was cancelled). Its
  /// captures are released at once.
  void cancel();
  bool cancelled() const noexcept { return state_ && state_->cancelled; }

 private:
  HandlePtr state_;
};

}  // namespace handoff::evloop
