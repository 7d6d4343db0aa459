// testkit/pool_binding: a handler pool driven by a standalone event loop (chapter 04).
// Role: the least a program outside the server (a test, the loop peers' benchmark) needs
// to give run_in_executor a pool: bind the pool's completion channel to the loop's reactor
// and ask the pool before and after every poll, as server::Worker does for its pool.
#pragma once

#include <stdexcept>

#include "evloop/event_loop.h"
#include "pool/handler_pool.h"
#include "pool/job.h"
#include "stats/thread_stats.h"

namespace handoff::testkit {

/// Binds `pool` to `loop` for tasks only (evloop::Executor): its threads start, their
/// records and one for the loop thread ("loop") go into `registry`, and the binding
/// becomes the loop's poll hooks. Loop thread, not during a run. Stop the pool (through
/// Executor::stop) before the binding goes; the binding must outlive the pool's stop.
class PoolBinding final : public evloop::PollHooks, public pool::FrameSink {
 public:
  PoolBinding(evloop::EventLoop& loop, pool::HandlerPool& pool, stats::Registry& registry) : loop_(loop), pool_(pool) {
    pool_.bind(loop_.reactor(), *this, registry, registry.add("loop", "loop"));
    loop_.set_poll_hooks(this);
  }
  ~PoolBinding() { loop_.set_poll_hooks(nullptr); }  // the loop has no poll hooks after it
  PoolBinding(const PoolBinding&) = delete;
  PoolBinding& operator=(const PoolBinding&) = delete;

  int before_poll() override {
    if (!pool_.ready_to_wait()) return 0;  // completions wait: look, do not block
    const int cap = pool_.max_wait_ms();
    return cap == pool::HandlerPool::kNoWaitCap ? -1 : cap;
  }
  void before_nonblocking_poll() override { pool_.before_nonblocking_poll(); }
  void after_poll(int) override { pool_.after_wait(); }
  /// Tasks send no frames: a frame here is a request job submitted to a task-only pool,
  /// which nobody would answer (throws std::logic_error).
  void on_frame(pool::Frame&) override {
    throw std::logic_error("PoolBinding: a frame came back from a task-only pool");
  }

 private:
  evloop::EventLoop& loop_;
  pool::HandlerPool& pool_;
};

}  // namespace handoff::testkit
