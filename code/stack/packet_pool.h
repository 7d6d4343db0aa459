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
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

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
  std::unique_ptr<std::atomic<std::uint32_t>[]> next_;
  // The lock-free pool's head: tag (high 32 bits) and top buffer (index + 1, low 32 bits).
  alignas(64) std::atomic<std::uint64_t> head_{0};
  // The reserve: guarded by the owner's lock.
  alignas(64) std::vector<std::uint32_t> reserve_;
  std::atomic<std::uint64_t> takes_{0};
  std::atomic<std::uint64_t> take_empty_{0};
  std::atomic<std::uint64_t> give_backs_{0};
  std::atomic<std::uint64_t> refills_{0};
  std::atomic<std::uint64_t> refilled_{0};
};

}  // namespace handoff::stack
