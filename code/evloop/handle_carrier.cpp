// evloop/handle_carrier: a loop-thread Handle carried off its loop's thread and back, as a
// run_in_executor callable's capture or result (chapter 04).
#include "evloop/handle_carrier.h"

#include <utility>

#include "evloop/event_loop.h"

namespace handoff::evloop {

Handle HandleCarrier::take() {
  if (!handle_) return Handle();
  loop_->owner().check("taken out of a HandleCarrier");
  Handle out = std::move(*handle_);
  handle_.reset();
  return out;
}

// [handle_carrier.drop]
void HandleCarrier::post_drop() noexcept {
  if (!handle_) return;
  // Moved, not copied, into the post: its count is untouched on this thread. The loop
  // drops it in the callback, or with the post if no run takes it (its destructor).
  loop_->call_soon_threadsafe([handle = std::move(*handle_)]() mutable { handle = Handle(); });
  handle_.reset();
}
// [handle_carrier.drop]

}  // namespace handoff::evloop
