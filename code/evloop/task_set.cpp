// evloop/task_set: start Tasks detached on the event loop, and own them until they end
// (chapter 04).
#include "evloop/task_set.h"

#include <utility>

namespace handoff::evloop {

/// The frame on top of a spawned task: it awaits the task, and at its end it takes itself
/// out of the set, frees its own frame (which frees the task's), and reports.
struct TaskSet::Root {
  struct promise_type {
    Root get_return_object() noexcept { return Root{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    std::suspend_always initial_suspend() noexcept { return {}; }  // listed before it starts
    auto final_suspend() noexcept {
      /// The root's last step: frees its frame, then reports the end to the set.
      struct End {
        bool await_ready() noexcept { return false; }
        void await_suspend(std::coroutine_handle<promise_type> self) noexcept {
          promise_type& p = self.promise();
          TaskSet* set = p.set;
          const auto where = p.where;
          std::exception_ptr error = std::move(p.error);
          auto done = std::move(p.done);
          self.destroy();  // suspended here, so it may be freed; nothing of it is touched after
          set->ended(where, std::move(error), std::move(done));
        }
        void await_resume() noexcept {}
      };
      return End{};
    }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }

    TaskSet* set = nullptr;
    std::list<std::coroutine_handle<>>::iterator where;
    std::function<void(std::exception_ptr)> done;
    std::exception_ptr error;
  };
  std::coroutine_handle<promise_type> frame;
};

TaskSet::Root TaskSet::run_root(Task<void> task) { co_await std::move(task); }

void TaskSet::spawn(Task<void> task, std::function<void(std::exception_ptr)> done) {
  const auto frame = run_root(std::move(task)).frame;
  auto& p = frame.promise();
  p.set = this;
  p.done = std::move(done);
  p.where = roots_.insert(roots_.end(), frame);
  frame.resume();  // up to the task's first suspension, or its end
}

void TaskSet::ended(std::list<std::coroutine_handle<>>::iterator where, std::exception_ptr error,
                    std::function<void(std::exception_ptr)> done) {
  roots_.erase(where);
  if (done) {
    done(std::move(error));
  } else if (error) {
    loop_.call_soon([error] { std::rethrow_exception(error); });  // ends the run, as a throwing callback does
  }
}

void TaskSet::cancel_all() noexcept {
  // Destroying a top frame destroys the task it awaits, and down the chain the awaiter each
  // frame waits in, which withdraws its wait. A destroyed frame never reaches its end.
  while (!roots_.empty()) {
    const std::coroutine_handle<> frame = roots_.front();
    roots_.pop_front();
    frame.destroy();
  }
}

}  // namespace handoff::evloop
