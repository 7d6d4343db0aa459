// evloop/handle: a callback the event loop will run, and the caller's means to cancel it
// (chapter 04).
#include "evloop/handle.h"

#include "evloop/timer_heap.h"

namespace handoff::evloop {

void Handle::cancel() {
  if (!state_ || state_->cancelled) return;
  state_->cancelled = true;
  state_->callback = nullptr;  // release the captures now, as asyncio drops _callback
  if (state_->heap != nullptr) state_->heap->note_cancelled();
}

}  // namespace handoff::evloop
