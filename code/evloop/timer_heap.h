// evloop/timer_heap: the event loop's timers, earliest deadline first, with lazy
// cancellation (chapter 04).
// Role: hold call_later/call_at handles by deadline; a cancelled timer stays in the heap
// until it reaches the top (then it is dropped without a wake-up) or until the dead entries
// outnumber the live ones (then the heap is compacted), as asyncio's
// base_events.BaseEventLoop._run_once cleans its _scheduled list. Two checks at the cancel
// keep a burst of cancels from piling up: a dead entry at the heap's end is dropped at once
// (the usual case of a timeout cancelled soon after it was set), and the compaction rule is
// checked at every cancel as well as before every wait.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "evloop/handle.h"

namespace handoff::evloop {

/// A binary min-heap of (deadline, arrival) → handle. Equal deadlines run in the order they
/// were scheduled. Loop thread only. Cost: O(log n) per push and pop; a cancel is O(1)
/// amortized: dropping dead entries off the vector's end keeps the heap a heap and costs
/// O(1) each, and a compaction is O(n), run only when more than half of more than
/// kMinCompact entries are dead, so it follows at least n / 2 cancels since the last one
/// and its cost is spread over them. Why at the cancel and not only once per turn: a
/// callback that makes and cancels 200,000 timers would otherwise hold 200,000 entries and
/// handles until its turn ends and free them all at once, outside the allocator's
/// per-thread caches (chapter 04's peers table, the cancelled timer row, measures it).
class TimerHeap {
 public:
  /// asyncio's _MIN_SCHEDULED_TIMER_HANDLES and _MIN_CANCELLED_TIMER_HANDLES_FRACTION.
  static constexpr std::size_t kMinCompact = 100;

  TimerHeap() = default;
  ~TimerHeap();  // detaches the handles it still holds
  TimerHeap(const TimerHeap&) = delete;
  TimerHeap& operator=(const TimerHeap&) = delete;

  void push(std::int64_t when_ns, HandlePtr handle);
  /// A handle in this heap was cancelled (Handle::cancel calls it): count it, drop the dead
  /// at the vector's end, and compact if the dead still outnumber the live. Releases the
  /// heap's references to dead handles (the cancelled one stays alive in its Handle).
  void note_cancelled();

  /// Drop dead entries: all of them if they outnumber the live ones (compaction), else those
  /// at the top. Then the top, if any, is live.
  void prune();
  /// The earliest deadline, after prune(): the loop's wait ends there.
  std::optional<std::int64_t> next_deadline() const;
  /// Append every live handle due at `now_ns` (deadline <= now) to `due`, in deadline order.
  /// Returns how many it appended.
  std::size_t pop_due(std::int64_t now_ns, std::vector<HandlePtr>& due);

  std::size_t size() const noexcept { return entries_.size(); }  ///< live and dead
  std::size_t cancelled() const noexcept { return cancelled_; }  ///< dead, still held

 private:
  /// One timer: its deadline, its arrival number (the tie-break) and its handle.
  struct Entry {
    std::int64_t when_ns;
    std::uint64_t arrival;
    HandlePtr handle;
  };
  static bool later(const Entry& a, const Entry& b) noexcept;  // the heap's order: a after b
  Entry pop_top();
  void drop_dead_tail() noexcept;  // pop dead entries off the vector's end
  bool compact_if_due();  // the compaction rule; returns whether it compacted

  std::vector<Entry> entries_;
  std::size_t cancelled_ = 0;
  std::uint64_t arrivals_ = 0;
};

}  // namespace handoff::evloop
