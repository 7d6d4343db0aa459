// evloop/pool_binding: a handler pool driven by a standalone event loop (chapter 04).
#include "evloop/pool_binding.h"

#include <stdexcept>

namespace handoff::evloop {

PoolBinding::PoolBinding(EventLoop& loop, pool::HandlerPool& pool, stats::Registry& registry)
    : loop_(loop), pool_(pool) {
  pool_.bind(loop_.reactor(), *this, registry, registry.add("loop", "loop"));
  loop_.set_poll_hooks(this);
}

PoolBinding::~PoolBinding() { loop_.set_poll_hooks(nullptr); }

int PoolBinding::before_poll() {
  if (!pool_.ready_to_wait()) return 0;  // completions wait: look, do not block
  const int cap = pool_.max_wait_ms();
  return cap == pool::HandlerPool::kNoWaitCap ? -1 : cap;
}

void PoolBinding::before_nonblocking_poll() { pool_.before_nonblocking_poll(); }

void PoolBinding::after_poll(int) { pool_.after_wait(); }

void PoolBinding::on_frame(pool::Frame&) {
  throw std::logic_error("PoolBinding: a frame came back from a task-only pool");
}

}  // namespace handoff::evloop
