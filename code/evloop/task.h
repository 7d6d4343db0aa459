// evloop/task: Task<T>, a C++20 coroutine that runs on the event loop's thread (chapter 04).
// Role: let a handler read as straight-line code that waits (a timer, a descriptor, an
// executor call) without blocking the loop: each wait suspends the coroutine, and a loop
// callback resumes it, as asyncio's Task steps a coroutine from the loop's callbacks.
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace handoff::evloop {

template <class T = void>
class Task;

namespace detail {

/// What every Task's promise keeps: who awaits it, and how it ended.
template <class T>
class TaskPromiseBase {
 public:
  using Stored = std::conditional_t<std::is_void_v<T>, std::monostate, T>;

  std::suspend_always initial_suspend() noexcept { return {}; }  // lazy: runs when awaited
  /// At its end the task resumes whoever awaited it (symmetric transfer: no stack grows
  /// however long a chain of tasks is); with nobody, it stays suspended for its owner.
  auto final_suspend() noexcept {
    /// Resumes the awaiting coroutine by symmetric transfer (or none: noop_coroutine).
    struct Transfer {
      bool await_ready() noexcept { return false; }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<>) noexcept { return continuation; }
      void await_resume() noexcept {}
      std::coroutine_handle<> continuation;
    };
    return Transfer{continuation_ ? continuation_ : std::noop_coroutine()};
  }
  void unhandled_exception() noexcept { outcome_.template emplace<2>(std::current_exception()); }

  void set_continuation(std::coroutine_handle<> c) noexcept { continuation_ = c; }
  /// The value, or the task's exception rethrown (once it has ended).
  T take() {
    if (outcome_.index() == 2) std::rethrow_exception(std::get<2>(outcome_));
    if constexpr (!std::is_void_v<T>) return std::move(std::get<1>(outcome_));
  }

 protected:
  std::variant<std::monostate, Stored, std::exception_ptr> outcome_;

 private:
  std::coroutine_handle<> continuation_;
};

/// A Task<T>'s promise: keeps the value its coroutine returns.
template <class T>
class TaskPromise final : public TaskPromiseBase<T> {
 public:
  Task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) {
    this->outcome_.template emplace<1>(std::forward<U>(v));
  }
};

/// A Task<void>'s promise: records that its coroutine returned.
template <>
class TaskPromise<void> final : public TaskPromiseBase<void> {
 public:
  Task<void> get_return_object() noexcept;
  void return_void() noexcept { outcome_.emplace<1>(); }
};

}  // namespace detail

/// A coroutine returning T, run on the loop's thread.
///
/// Lazy: calling a Task coroutine only creates its frame; it starts when awaited
/// (`co_await std::move(task)`) or handed to a TaskSet. The Task object owns the frame and
/// destroys it in its destructor, whatever state it is in; an awaiting coroutine owns the
/// Task it awaits (it lives in the awaiter's frame), so destroying the outermost frame
/// destroys the whole chain. Destroying a frame suspended in a wait destroys the awaiter
/// it waits in, and each of this library's awaiters withdraws its wait there: a timer is
/// cancelled (it costs no wake-up), a reader or writer is removed, an executor call is
/// detached; so nothing resumes a dead frame. Exceptions: one that leaves the coroutine
/// is kept in its frame and rethrown in the awaiter by `co_await`. Not thread-safe: create,
/// await, resume and destroy it on the loop's thread.
template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::TaskPromise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) noexcept : frame_(h) {}
  Task(Task&& other) noexcept : frame_(std::exchange(other.frame_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      reset();
      frame_ = std::exchange(other.frame_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  /// `co_await std::move(task)`: start it (the awaiter suspends until it ends), then return
  /// its value or rethrow its exception.
  auto operator co_await() && noexcept {
    /// Starts the task on co_await and hands back its outcome when it ends.
    struct Awaiter {
      bool await_ready() const noexcept { return frame.done(); }
      std::coroutine_handle<> await_suspend(std::coroutine_handle<> waiter) noexcept {
        frame.promise().set_continuation(waiter);
        return frame;  // symmetric transfer into the task
      }
      T await_resume() { return frame.promise().take(); }
      Handle frame;
    };
    return Awaiter{frame_};
  }

 private:
  void reset() noexcept {
    if (frame_) frame_.destroy();
    frame_ = {};
  }
  Handle frame_;
};

template <class T>
Task<T> detail::TaskPromise<T>::get_return_object() noexcept {
  return Task<T>(Task<T>::Handle::from_promise(*this));
}

inline Task<void> detail::TaskPromise<void>::get_return_object() noexcept {
  return Task<void>(Task<void>::Handle::from_promise(*this));
}

}  // namespace handoff::evloop
