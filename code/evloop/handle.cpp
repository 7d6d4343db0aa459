// evloop/handle: a callback the event loop will run, and the caller's means to cancel it
// (chapter 04).
#include "evloop/handle.h"

#include "evloop/timer_heap.h"

namespace handoff::evloop {

void Handle::cancel() {
  if (!state_ || state_->cancelled) return;
  state_->cancelled = true;
  // The heap hears first: its compaction may run and drop its reference (ours keeps the
  // state alive), and the captures' destructors below may cancel other timers in turn.
  if (state_->heap != nullptr) state_->heap->note_cancelled();
  Callback released;  // the captures go at the end of this call, as asyncio drops _callback
  released.swap(state_->callback);  // leaves the handle's callback empty
}

}  // namespace handoff::evloop
