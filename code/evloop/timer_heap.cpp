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

void TimerHeap::push(std::int64_t when_ns, HandlePtr handle) {
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

bool TimerHeap::compact_if_due() {
  // asyncio's _run_once: compact when the dead are more than half of a heap of more than
  // kMinCompact entries.
  if (entries_.size() <= kMinCompact || cancelled_ * 2 <= entries_.size()) return false;
  std::erase_if(entries_, [](const Entry& e) {
    if (!e.handle->cancelled) return false;
    e.handle->heap = nullptr;
    return true;
  });
  std::make_heap(entries_.begin(), entries_.end(), later);
  cancelled_ = 0;
  return true;
}

void TimerHeap::drop_dead_tail() noexcept {
  // The last element of a binary heap is a leaf: taking it away leaves a heap.
  while (!entries_.empty() && entries_.back().handle->cancelled) {
    entries_.back().handle->heap = nullptr;
    entries_.pop_back();
    --cancelled_;
  }
}

void TimerHeap::note_cancelled() {
  ++cancelled_;
  // A timer pushed with the latest deadline stays the last entry until the next push, so a
  // timeout cancelled before the next call_later leaves nothing behind.
  drop_dead_tail();
  compact_if_due();  // at the cancel, so that a burst of cancels never piles up
}

void TimerHeap::prune() {
  // Firing live timers can leave the dead in the majority without a cancel: check again.
  if (compact_if_due()) return;
  // Else drop the dead only from the top, so that none sets the loop's wait.
  while (!entries_.empty() && entries_.front().handle->cancelled) pop_top();
}

std::optional<std::int64_t> TimerHeap::next_deadline() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.front().when_ns;
}

std::size_t TimerHeap::pop_due(std::int64_t now_ns, std::vector<HandlePtr>& due) {
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
