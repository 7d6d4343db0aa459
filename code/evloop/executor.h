// evloop/executor: run_in_executor: a callable on a pool thread, its result back on the
// loop's thread (chapter 04).
// Role: hand plain work to a pool::HandlerPool bound to the loop, as asyncio's
// loop.run_in_executor hands it to a thread pool, and bring its value or exception back
// through call_soon_threadsafe; every call ends exactly once, with an ExecutorError when its
// pool dropped it or let go of its thread, so no receiver (no coroutine) waits for ever.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include "evloop/event_loop.h"
#include "pool/handler_pool.h"
#include "pool/job.h"

namespace handoff::evloop {

/// What a call ends with when its work never ran or never came back: dropped unrun at its
/// pool's stop, submitted after the stop, or running on a thread the stop let go of at its
/// deadline.
class ExecutorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A call's outcome: its value, or the exception it ended with.
template <class T>
class Result {
 public:
  using Stored = std::conditional_t<std::is_void_v<T>, std::monostate, T>;
  static Result failed(std::exception_ptr e) {
    Result r;
    r.error_ = std::move(e);
    return r;
  }
  void set_value(Stored v) { value_.emplace(std::move(v)); }
  void set_error(std::exception_ptr e) noexcept { error_ = std::move(e); }
  std::exception_ptr error() const noexcept { return error_; }
  /// The value, or the exception rethrown.
  T get() && {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) return std::move(*value_);
  }

 private:
  std::optional<Stored> value_;
  std::exception_ptr error_;
};

class Executor;

namespace detail {

/// One call's shared state, whatever its result type.
///
/// One call's state, shared by its pool task, the post that brings it back, and its
/// Executor's list of calls in flight. The receiver is touched on the loop thread only.
class CallBase {
 public:
  virtual ~CallBase() = default;
  /// Loop thread: leave the executor's list, then hand the outcome to the receiver, if any.
  void finish();
  /// Loop thread: forget the receiver; the outcome, when it comes, goes nowhere.
  virtual void detach() noexcept = 0;

 protected:
  virtual void deliver() = 0;
  std::exception_ptr failure_;  ///< set on the loop thread when the work will never come back

 private:
  friend class handoff::evloop::Executor;
  template <class T, class F>
  friend class ExecutorTask;
  Executor* owner_ = nullptr;  // while listed (loop thread)
  std::list<std::shared_ptr<CallBase>>::iterator where_;
  /// The pool's side has posted the outcome (complete(), or a drop). Written by a pool
  /// thread that holds its handler slot, or by the loop; read by Executor::stop() after the
  /// pool's stop(), whose join (or abandon()'s acquire of the thread's last enter_handler())
  /// orders the write before the read. A thread that was let go of never writes it.
  bool handed_over_ = false;
};

/// One call whose callable returns T: its result and its receiver.
template <class T>
class Call final : public CallBase {
 public:
  explicit Call(std::function<void(Result<T>)> receiver) : receiver_(std::move(receiver)) {}
  Result<T>& result() noexcept { return result_; }
  void detach() noexcept override { receiver_ = nullptr; }

 private:
  void deliver() override {
    if (!receiver_) return;
    auto receive = std::move(receiver_);
    receiver_ = nullptr;
    // failure_ first: a thread that was let go of may still be writing result_.
    receive(failure_ ? Result<T>::failed(failure_) : std::move(result_));
  }
  Result<T> result_;  // written by the pool thread (or the drop), read after the post
  std::function<void(Result<T>)> receiver_;
};

/// The pool's side of one call (pool::PoolTask's contract). The callable is destroyed on the
/// pool thread right after it returns, or, unrun, wherever its job is dropped.
template <class T, class F>
class ExecutorTask final : public pool::PoolTask {
 public:
  ExecutorTask(EventLoop& loop, F fn, std::shared_ptr<Call<T>> call)
      : loop_(loop), fn_(std::move(fn)), call_(std::move(call)) {}
  ~ExecutorTask() override {
    if (ran_) return;  // completed, or let go of inside run(): touch nothing of the loop's
    call_->result().set_error(std::make_exception_ptr(ExecutorError("run_in_executor: dropped unrun by its pool")));
    hand_over();
  }
  void run() noexcept override {
    ran_ = true;
    try {
      if constexpr (std::is_void_v<T>) {
        (*fn_)();
        call_->result().set_value({});
      } else {
        call_->result().set_value((*fn_)());
      }
    } catch (...) {
      call_->result().set_error(std::current_exception());
    }
    fn_.reset();
  }
  void complete() noexcept override { hand_over(); }

 private:
  void hand_over() noexcept {
    call_->handed_over_ = true;
    loop_.call_soon_threadsafe([call = call_] { call->finish(); });
  }
  EventLoop& loop_;
  std::optional<F> fn_;
  std::shared_ptr<Call<T>> call_;
  bool ran_ = false;
};

}  // namespace detail

/// The caller's hold on one call: detach() before it ends and the receiver is never
/// called (the work itself still runs if it has started). Loop thread.
class ExecutorCall {
 public:
  ExecutorCall() = default;
  explicit ExecutorCall(std::shared_ptr<detail::CallBase> call) : call_(std::move(call)) {}
  void detach() noexcept {
    if (call_) call_->detach();
    call_.reset();
  }

 private:
  std::shared_ptr<detail::CallBase> call_;
};

/// Runs callables on `pool`'s threads and brings each outcome back to `loop`'s thread. The
/// pool must be bound to the loop (server::Worker does it; outside a server,
/// testkit::PoolBinding), and the loop must outlive the pool's stop. Stop the pool through
/// stop() below: a pool stopped directly cannot tell the executor which calls it let go of.
///
/// Guarantees: each call's receiver runs once, on the loop thread, from a loop callback
/// (never inside submit), with the callable's value, its exception, or an ExecutorError;
/// calls come back in the order their pool threads posted them. Cost per call: a job, a
/// task and a call state (three allocations), one list node, and one call_soon_threadsafe.
class Executor {
 public:
  Executor(EventLoop& loop, pool::HandlerPool& pool) : loop_(loop), pool_(pool) {}
  /// Forgets its calls: a call still out ends, when it comes back, with nobody to tell.
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Loop thread: run `fn()` on a pool thread; `receive(Result<T>)` gets its outcome.
  /// `fn` is destroyed on the pool thread: a loop-thread Handle it captures or returns
  /// travels in an evloop::HandleCarrier (evloop/handle_carrier.h).
  template <class F, class Receive>
  ExecutorCall submit(F fn, Receive receive) {
    using T = std::invoke_result_t<F&>;
    auto call = std::make_shared<detail::Call<T>>(std::function<void(Result<T>)>(std::move(receive)));
    list(call);
    if (stopped_) {
      fail_later(call, "run_in_executor: submitted after its pool was stopped");
    } else {
      auto* job = new pool::Job{};
      job->task = std::make_unique<detail::ExecutorTask<T, F>>(loop_, std::move(fn), call);
      pool_.submit(job);
    }
    return ExecutorCall(std::move(call));
  }

  /// Loop thread: stop the pool (HandlerPool::stop), then end every call whose thread the
  /// stop let go of at its deadline with an ExecutorError, in a callback of the loop's next
  /// turn. Calls dropped unrun end through their own post. Returns what the pool's stop does.
  std::size_t stop(std::int64_t deadline_ns);

  /// Calls submitted and not yet ended (loop thread).
  std::size_t in_flight() const noexcept { return calls_.size(); }

 private:
  friend class detail::CallBase;
  void list(const std::shared_ptr<detail::CallBase>& call);
  void unlist(detail::CallBase& call) noexcept;
  void fail_later(const std::shared_ptr<detail::CallBase>& call, const char* why);

  EventLoop& loop_;
  pool::HandlerPool& pool_;
  std::list<std::shared_ptr<detail::CallBase>> calls_;  // submitted, not yet ended
  bool stopped_ = false;
};

/// `co_await run_in_executor(executor, fn)`: fn() on a pool thread; the coroutine resumes
/// on the loop thread with its value, or with its exception (or an ExecutorError) thrown.
/// A coroutine destroyed while it waits detaches its call: the result goes nowhere.
template <class F>
class [[nodiscard]] ExecutorAwaiter {
 public:
  using T = std::invoke_result_t<F&>;
  ExecutorAwaiter(Executor& executor, F fn) : executor_(executor), fn_(std::move(fn)) {}
  ExecutorAwaiter(const ExecutorAwaiter&) = delete;
  ExecutorAwaiter& operator=(const ExecutorAwaiter&) = delete;
  ~ExecutorAwaiter() { call_.detach(); }

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> waiter) {
    call_ = executor_.submit(std::move(fn_), [this, waiter](Result<T> r) {
      result_ = std::move(r);
      call_ = {};  // ended: nothing left to detach
      waiter.resume();
    });
  }
  T await_resume() { return std::move(result_).get(); }

 private:
  Executor& executor_;
  F fn_;
  ExecutorCall call_;
  Result<T> result_;
};

template <class F>
ExecutorAwaiter<F> run_in_executor(Executor& executor, F fn) {
  return ExecutorAwaiter<F>(executor, std::move(fn));
}

}  // namespace handoff::evloop
