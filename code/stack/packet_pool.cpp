// stack/packet_pool: the packet buffers a send fills, after Onload's non-blocking packet pool
// (chapter 05).
#include "stack/packet_pool.h"

#include <algorithm>

namespace handoff::stack {

PacketPool::PacketPool(PacketPoolOptions options, PacketPoolSeams seams)
    : options_(options),
      seams_(seams),
      storage_(new std::byte[std::size_t{options.packets} * options.packet_bytes]),
      next_(new std::atomic<std::uint32_t>[options.packets]) {
  for (std::uint32_t i = 0; i < options_.packets; ++i) next_[i].store(0, std::memory_order_relaxed);
  const std::uint32_t free_pool = std::min(options_.free_pool, options_.packets);
  // Buffers [0, free_pool) start in the lock-free pool, the rest in the reserve. No other
  // thread can see the pool yet: the constructor's end publishes it (whoever hands the
  // object to other threads orders that).
  for (std::uint32_t i = free_pool; i-- > 0;) give_back(i);
  reserve_.reserve(options_.packets);
  for (std::uint32_t i = options_.packets; i-- > free_pool;) reserve_.push_back(i);
  give_backs_.store(0, std::memory_order_relaxed);
}

// [packet_pool.take]
std::int32_t PacketPool::try_take() noexcept {
  // acquire: pairs with the release CAS of the give_back() that pushed this top: its link
  // and everything its giver wrote to the buffer happen-before our use of them.
  std::uint64_t head = head_.load(std::memory_order_acquire);
  for (;;) {
    const std::uint32_t top = top_of(head);
    if (top == 0) {
      take_empty_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
      return kNone;
    }
    // relaxed: ordered by the acquire above (or the failed CAS's acquire below). It may be
    // stale if the top was taken and given back meanwhile; then the tag has moved and our
    // CAS fails.
    const std::uint32_t below = next_[top - 1].load(std::memory_order_relaxed);
    if (seams_.hooks != nullptr) seams_.hooks->at(PacketPoolPoint::take_read_head);
    // acquire on both outcomes: success, as the load above (we own the buffer now, after its
    // giver's writes); failure, because `head` becomes the top we read a link of next.
    if (head_.compare_exchange_weak(head, make_head(next_tag(head), below), std::memory_order_acquire,
                                    std::memory_order_acquire)) {
      takes_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
      return static_cast<std::int32_t>(top - 1);
    }
  }
}
// [packet_pool.take]

void PacketPool::give_back(std::uint32_t index) noexcept {
  // relaxed: a guess for the CAS, which orders.
  std::uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    // relaxed: published by the release CAS below.
    next_[index].store(top_of(head), std::memory_order_relaxed);
    // release: pairs with try_take()'s acquire: our link and our writes to the buffer are
    // visible to its next taker. Every push moves the tag too, so a taker that read an old
    // top cannot mistake this one for it.
    if (head_.compare_exchange_weak(head, make_head(next_tag(head), index + 1), std::memory_order_release,
                                    std::memory_order_relaxed)) {
      give_backs_.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
      return;
    }
  }
}

void PacketPool::release_locked(std::uint32_t index) { reserve_.push_back(index); }

std::uint32_t PacketPool::refill_locked() noexcept {
  std::uint32_t moved = 0;
  while (moved < options_.refill_batch && !reserve_.empty()) {
    give_back(reserve_.back());
    reserve_.pop_back();
    ++moved;
  }
  // relaxed: statistics.
  refills_.fetch_add(1, std::memory_order_relaxed);
  refilled_.fetch_add(moved, std::memory_order_relaxed);
  return moved;
}

PacketPoolCounters PacketPool::counters() const noexcept {
  // relaxed throughout: statistics.
  PacketPoolCounters c;
  c.takes = takes_.load(std::memory_order_relaxed);
  c.take_empty = take_empty_.load(std::memory_order_relaxed);
  c.give_backs = give_backs_.load(std::memory_order_relaxed);
  c.refills = refills_.load(std::memory_order_relaxed);
  c.refilled = refilled_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace handoff::stack
