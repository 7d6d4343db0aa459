// evloop/handle: a callback the event loop will run, and the caller's means to cancel it
// (chapter 04).
#include "evloop/handle.h"

#include <new>

#include "evloop/timer_heap.h"

namespace handoff::evloop {

// [handle.cache]
namespace {

/// A thread's freed states, linked through their first bytes. Its destructor frees them at
/// the thread's exit and marks the cache gone: a state freed after that (a static loop's,
/// at the program's exit) goes straight back to the heap.
struct FreedStates {
  struct Node {
    Node* next;
  };
  Node* head = nullptr;
  std::size_t count = 0;
  ~FreedStates();
};
thread_local FreedStates t_freed;
thread_local bool t_freed_gone = false;  // trivially destructible: readable after t_freed's end

FreedStates::~FreedStates() {
  t_freed_gone = true;
  while (head != nullptr) {
    Node* n = head;
    head = n->next;
    ::operator delete(n, sizeof(HandleState));
  }
  count = 0;
}

}  // namespace

void* HandleState::operator new(std::size_t size) {
  static_assert(sizeof(HandleState) >= sizeof(FreedStates::Node));
  if (size == sizeof(HandleState) && !t_freed_gone && t_freed.head != nullptr) {
    FreedStates::Node* n = t_freed.head;
    t_freed.head = n->next;
    --t_freed.count;
    return n;
  }
  return ::operator new(size);
}

void HandleState::operator delete(void* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  if (size == sizeof(HandleState) && !t_freed_gone && t_freed.count < kCachedPerThread) {
    t_freed.head = new (p) FreedStates::Node{t_freed.head};
    ++t_freed.count;
    return;
  }
  ::operator delete(p, size);
}
// [handle.cache]

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
