// evloop/task_set: start Tasks detached on the event loop, and own them until they end
// (chapter 04).
// Role: the top of every coroutine chain (asyncio's loop.create_task): a request handler is
// started here and nobody awaits it; the set keeps it, counts it (a server's drain waits
// for what it holds), and destroys what is still suspended when asked (at a deadline).
#pragma once

#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <list>

#include "evloop/event_loop.h"
#include "evloop/task.h"

namespace handoff::evloop {

/// Tasks started and not yet ended, owned by the set.
///
/// spawn() starts a task at once, on the caller's stack, up to its first suspension (so a
/// task that never waits has ended when spawn returns); from then on loop callbacks resume
/// it. When it ends its frame is freed and `done` runs with its exception (null when it
/// returned; `done` must not throw). With no `done`, an exception it lets out ends the loop's run, as a callback
/// that throws does: it is rethrown from a callback of the loop's next turn. cancel_all()
/// (and the destructor) destroys every task still suspended, which withdraws its waits
/// (evloop/task.h); their `done` is not called. Loop thread only; cancel_all() never from
/// inside one of the set's own tasks. Cost per task: its frames, and a list node.
class TaskSet {
 public:
  explicit TaskSet(EventLoop& loop) : loop_(loop) {}
  ~TaskSet() { cancel_all(); }
  TaskSet(const TaskSet&) = delete;
  TaskSet& operator=(const TaskSet&) = delete;

  void spawn(Task<void> task, std::function<void(std::exception_ptr)> done = {});
  /// Destroy every task still suspended.
  void cancel_all() noexcept;
  /// Tasks started and not yet ended (or cancelled).
  std::size_t size() const noexcept { return roots_.size(); }

 private:
  struct Root;
  static Root run_root(Task<void> task);
  void ended(std::list<std::coroutine_handle<>>::iterator where, std::exception_ptr error,
             std::function<void(std::exception_ptr)> done);

  EventLoop& loop_;
  std::list<std::coroutine_handle<>> roots_;  // each task's top frame, while it runs
};

}  // namespace handoff::evloop
