// evloop/executor: run_in_executor: a callable on a pool thread, its result back on the
// loop's thread (chapter 04).
#include "evloop/executor.h"

namespace handoff::evloop {

void detail::CallBase::finish() {
  if (owner_ != nullptr) owner_->unlist(*this);
  deliver();
}

Executor::~Executor() {
  // On the loop thread, so that no receiver is destroyed on a thread the stop let go of,
  // which may hold a call's last reference.
  for (auto& call : calls_) {
    call->detach();
    call->owner_ = nullptr;
  }
}

void Executor::list(const std::shared_ptr<detail::CallBase>& call) {
  call->owner_ = this;
  call->where_ = calls_.insert(calls_.end(), call);
}

void Executor::unlist(detail::CallBase& call) noexcept {
  call.owner_ = nullptr;
  calls_.erase(call.where_);  // may drop the list's reference: the post's keeps `call` alive
}

void Executor::fail_later(const std::shared_ptr<detail::CallBase>& call, const char* why) {
  call->failure_ = std::make_exception_ptr(ExecutorError(why));
  call->handed_over_ = true;
  loop_.call_soon([call] { call->finish(); });
}

std::size_t Executor::stop(std::int64_t deadline_ns) {
  stopped_ = true;
  const std::size_t dropped = pool_.stop(deadline_ns);
  // Every thread has finished or been let go of. A call the pool dropped has posted its
  // error; one still not handed over ran on a thread let go of inside its work, which will
  // never post: end it here, or its receiver would wait for ever.
  for (const auto& call : calls_) {
    if (!call->handed_over_) fail_later(call, "run_in_executor: its thread was let go of at the pool's stop deadline");
  }
  return dropped;
}

}  // namespace handoff::evloop
