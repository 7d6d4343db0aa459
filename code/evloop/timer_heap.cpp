// evloop/timer_heap: the event loop's timers, earliest deadline first, with lazy
// cancellation (chapter 04).
#include "evloop/timer_heap.h"

#include <algorithm>
#include <utility>

namespace handoff::evloop {

TimerHeap::~TimerHeap() {
  for (auto& e : entries_) e.handle->heap = nullptr;
}

bool TimerHeap::later(const Entry& a, const Entry& b) noexcept {
  return a.when_ns != b.when_ns ? a.when_ns > b.when_ns : a.arrival > b.arrival;
}

void TimerHeap::push(std::int64_t when_ns, std::shared_ptr<HandleState> handle) {
  handle->heap = this;
  entries_.push_back(Entry{when_ns, arrivals_++, std::move(handle)});
  std::push_heap(entries_.begin(), entries_.end(), later);
}

TimerHeap::Entry TimerHeap::pop_top() {
  std::pop_heap(entries_.begin(), entries_.end(), later);
  Entry e = std::move(entries_.back());
  entries_.pop_back();
  e.handle->heap = nullptr;
  if (e.handle->cancelled) --cancelled_;
  return e;
}

// [timer_heap.prune]
void TimerHeap::prune() {
  // asyncio's _run_once: compact when the dead are more than half of a heap of at least
  // kMinCompact entries, else drop the dead only from the top.
  if (entries_.size() > kMinCompact && cancelled_ * 2 > entries_.size()) {
    std::erase_if(entries_, [](const Entry& e) {
      if (!e.handle->cancelled) return false;
      e.handle->heap = nullptr;
      return true;
    });
    std::make_heap(entries_.begin(), entries_.end(), later);
    cancelled_ = 0;
    return;
  }
  while (!entries_.empty() && entries_.front().handle->cancelled) pop_top();
}
// [timer_heap.prune]

std::optional<std::int64_t> TimerHeap::next_deadline() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.front().when_ns;
}

std::size_t TimerHeap::pop_due(std::int64_t now_ns, std::vector<std::shared_ptr<HandleState>>& due) {
  std::size_t moved = 0;
  while (!entries_.empty() && entries_.front().when_ns <= now_ns) {
    Entry e = pop_top();
    if (e.handle->cancelled) continue;
    due.push_back(std::move(e.handle));
    ++moved;
  }
  return moved;
}

}  // namespace handoff::evloop
