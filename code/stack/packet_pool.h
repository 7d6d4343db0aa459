// stack/packet_pool: the packet buffers a send fills, after Onload's non-blocking packet pool
// (chapter 05).
// Role: a send takes its buffer without the stack lock (Onload's ci_netif_pkt_alloc_nonb);
// only when this lock-free "free pool" is empty must it take the lock, to move buffers in
// from the reserve that the lock protects (seed 004: tcp_send_nonb_pool_empty counted 47-50
// such sends per run, each a lock taken where none was needed).
//
// The free pool is a Treiber stack over a fixed array: one 64-bit head word holding the top
// buffer's index and a tag that every successful take and give-back increments. The tag is
// what makes a take safe against ABA: a taker reads the top (A) and the link below it (B),
// and is preempted; meanwhile A is taken, B is taken, A is given back. A's link is no longer
// B, but the head shows A again; an untagged CAS would succeed and install B, a buffer that
// is in use, as the top. With the tag the head no longer compares equal and the CAS fails.
// The seam aba_tag = false exists only to let a test show that failure (negative control).
//
// A template over the atomics seam (sync/atomics.h), as the wait words are (issue 39): the
// product runs PacketPool<> (std::atomic; compiled once, in packet_pool.cpp), and the
// relaxed-memory model (code/relacy/packet_pool_model.cpp) runs this very take and give-back
// on Relacy's atomics. So the definitions are here, in the header.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sync/atomics.h"

namespace handoff::stack {

/// Where a test may stop a taker: between reading the head and its link, and the CAS.
enum class PacketPoolPoint { take_read_head };

/// A test's window into the packet pool's take (named points, as StackLockHooks).
class PacketPoolHooks {
 public:
  virtual ~PacketPoolHooks() = default;
  virtual void at(PacketPoolPoint point) noexcept = 0;
};

/// The packet pool's sizes.
struct PacketPoolOptions {
  std::uint32_t packets = 256;        ///< buffers in all
  std::uint32_t packet_bytes = 4096;  ///< bytes per buffer
  std::uint32_t free_pool = 64;       ///< buffers placed in the lock-free pool at the start
  std::uint32_t refill_batch = 32;    ///< buffers one refill moves from the reserve
};

/// The packet pool's test seams. Production code never sets it; the defaults are the
/// correct pool.
struct PacketPoolSeams {
  bool aba_tag = true;               ///< false: a broken pool, for the ABA test's control only
  PacketPoolHooks* hooks = nullptr;  ///< test hooks; nullptr in production
};

/// What the packet pool did since it was made.
struct PacketPoolCounters {
  std::uint64_t takes = 0;       ///< buffers taken from the lock-free pool
  std::uint64_t take_empty = 0;  ///< takes that found it empty
  std::uint64_t give_backs = 0;  ///< buffers pushed back lock-free (by give_back or a refill)
  std::uint64_t refills = 0;     ///< refills run under the lock
  std::uint64_t refilled = 0;    ///< buffers those refills moved from the reserve
};

/// A fixed set of packet buffers. Guarantee: a buffer is held by at most one taker at a time
/// (the tagged head); try_take() and give_back() never block and never take a lock;
/// release_locked() and refill_locked() must be called with the owner's lock held (the
/// NetworkStack's StackLock), which is what orders the reserve. Cost: a take or a give-back
/// is a load and one CAS on a shared line (more under contention); a refill is one
/// give-back per buffer moved.
template <class Atoms = sync::StdAtomics>
class PacketPool {
 public:
  static constexpr std::int32_t kNone = -1;

  explicit PacketPool(PacketPoolOptions options = {}, PacketPoolSeams seams = {});
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  /// A buffer from the lock-free pool, or kNone when it is empty.
  std::int32_t try_take() noexcept;
  /// Put a buffer back in the lock-free pool (one taken and not used).
  void give_back(std::uint32_t index) noexcept;

  /// Under the owner's lock: a buffer that has been sent goes back to the reserve.
  void release_locked(std::uint32_t index);
  /// Under the owner's lock: move up to refill_batch buffers from the reserve to the
  /// lock-free pool. Returns how many moved.
  std::uint32_t refill_locked() noexcept;
  /// Under the owner's lock: buffers in the reserve.
  std::size_t reserve_locked() const noexcept { return reserve_.size(); }

  std::byte* data(std::uint32_t index) noexcept { return storage_.get() + std::size_t{index} * options_.packet_bytes; }
  std::uint32_t packet_bytes() const noexcept { return options_.packet_bytes; }
  std::uint32_t refill_batch() const noexcept { return options_.refill_batch; }
  std::uint32_t packets() const noexcept { return options_.packets; }
  PacketPoolCounters counters() const noexcept;

 private:
  static std::uint64_t make_head(std::uint32_t tag, std::uint32_t top) noexcept {
    return (std::uint64_t{tag} << 32) | top;
  }
  static std::uint32_t top_of(std::uint64_t head) noexcept { return static_cast<std::uint32_t>(head); }
  static std::uint32_t tag_of(std::uint64_t head) noexcept { return static_cast<std::uint32_t>(head >> 32); }
  std::uint32_t next_tag(std::uint64_t head) const noexcept { return tag_of(head) + (seams_.aba_tag ? 1U : 0U); }

  const PacketPoolOptions options_;
  const PacketPoolSeams seams_;
  std::unique_ptr<std::byte[]> storage_;
  // next_[i]: the buffer below buffer i in the lock-free pool (index + 1; 0 = none). Atomic
  // because a taker reads the link of a top that another thread may be re-pushing.
  std::unique_ptr<typename Atoms::template atomic<std::uint32_t>[]> next_;
  // The lock-free pool's head: tag (high 32 bits) and top buffer (index + 1, low 32 bits).
  alignas(64) typename Atoms::template atomic<std::uint64_t> head_{0};
  // The reserve: guarded by the owner's lock.
  alignas(64) std::vector<std::uint32_t> reserve_;
  // Statistics: std::atomic under any seam (they order nothing, and no model checks them).
  std::atomic<std::uint64_t> takes_{0};
  std::atomic<std::uint64_t> take_empty_{0};
  std::atomic<std::uint64_t> give_backs_{0};
  std::atomic<std::uint64_t> refills_{0};
  std::atomic<std::uint64_t> refilled_{0};
};

template <class Atoms>
PacketPool<Atoms>::PacketPool(PacketPoolOptions options, PacketPoolSeams seams)
    : options_(options),
      seams_(seams),
      storage_(new std::byte[std::size_t{options.packets} * options.packet_bytes]),
      next_(new typename Atoms::template atomic<std::uint32_t>[options.packets]) {
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
template <class Atoms>
std::int32_t PacketPool<Atoms>::try_take() noexcept {
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

template <class Atoms>
void PacketPool<Atoms>::give_back(std::uint32_t index) noexcept {
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

template <class Atoms>
void PacketPool<Atoms>::release_locked(std::uint32_t index) {
  reserve_.push_back(index);
}

template <class Atoms>
std::uint32_t PacketPool<Atoms>::refill_locked() noexcept {
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

template <class Atoms>
PacketPoolCounters PacketPool<Atoms>::counters() const noexcept {
  // relaxed throughout: statistics.
  PacketPoolCounters c;
  c.takes = takes_.load(std::memory_order_relaxed);
  c.take_empty = take_empty_.load(std::memory_order_relaxed);
  c.give_backs = give_backs_.load(std::memory_order_relaxed);
  c.refills = refills_.load(std::memory_order_relaxed);
  c.refilled = refilled_.load(std::memory_order_relaxed);
  return c;
}

// The product's pool is compiled once, in packet_pool.cpp.
extern template class PacketPool<>;

}  // namespace handoff::stack
