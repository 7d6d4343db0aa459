// stack/network_stack: a model of one user-level network stack that sends go through
// (chapter 05).
// Role: every send of a response goes through its socket's stack, as every send of an
// accepted socket goes through the listener's Onload stack (seed 004). The topology decides
// how many threads share one: one stack for all workers (shared, the pool topology under
// Onload) or one per worker (Onload's per-thread stack names; seed 004's fix).
//
// A send, after Onload's non-blocking TCP send:
//  1. takes a packet buffer from the lock-free pool without the lock and copies the bytes in.
//     If the pool is empty, it takes the stack lock (blocking: Onload's send, finding nothing
//     to fill, does the same), refills the pool from the reserve and sends from the caller's
//     bytes under the lock (counted: pool-empty sends). Every holder tops the pool up from
//     the reserve before it unlocks, on every path (the lock runs the top-up from its own
//     unlock, after the deferred sends it ran gave their buffers back:
//     StackLockOptions::before_release), so the pool runs dry only at a new peak of replies
//     in flight;
//  2. needs the stack lock to transmit: a try-lock; if it is held, the send is left in the
//     lock word for the holder (the deferred send), who transmits it before it unlocks; past
//     the deferral limit the thread blocks on the lock and transmits itself;
//  3. the transmit is a real send(2) with MSG_DONTWAIT | MSG_NOSIGNAL, made by whichever
//     thread holds the lock. What the kernel does not take goes to the socket's send queue
//     (Onload's sendq), which later sends on that socket, and push() on its output edge,
//     transmit first. The packet buffer then goes back to the reserve.
// A send larger than one packet buffer skips the pool and sends from the caller's bytes
// under the lock (taken blocking).
//
// So a send never fails and never blocks on the socket: the stack accepts every byte, as a
// real stack's send returns once the bytes are in its buffers. What the caller learns later
// is on its StackSocket: queued() (accepted, not yet taken by the kernel: bound it by
// waiting for the output edge and calling push()) and error() (a transmit failed: the peer
// is gone). What is weaker than a real stack: the send queue is plain bytes in memory, with
// no retransmission and no window of its own; the kernel's socket does that part.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "stack/packet_pool.h"
#include "stack/stack_lock.h"
#include "stats/thread_stats.h"

namespace handoff::stack {

/// --stack-buzz-us N (N >= 0 microseconds, or -1 for ever) as StackLockOptions::buzz_ns.
std::int64_t buzz_ns_from_us(std::int64_t buzz_us) noexcept;

/// A stack's lock and packet-pool settings.
struct NetworkStackOptions {
  StackLockOptions lock;
  PacketPoolOptions pool;
};

/// How one send went.
enum class SendPath {
  direct,      ///< the try-lock succeeded: transmitted on this thread
  deferred,    ///< the lock was held: left to the holder, who transmits before unlocking
  after_wait,  ///< the deferral list was full: this thread blocked on the lock and transmitted
  pool_empty,  ///< no packet buffer: this thread took the lock, refilled and transmitted
  large,       ///< more than a packet buffer: transmitted under the lock, taken blocking
};

/// One socket as its stack sees it: the descriptor and its send queue. The owner (the one
/// thread that sends on it) keeps it at a fixed address from its first send to close():
/// deferred sends point at it.
class StackSocket {
 public:
  explicit StackSocket(int fd) noexcept : fd_(fd) {}
  StackSocket(const StackSocket&) = delete;
  StackSocket& operator=(const StackSocket&) = delete;

  int fd() const noexcept { return fd_; }
  /// Bytes the stack accepted that the kernel has not taken yet: deferred sends not yet run
  /// and the send queue. 0 means every byte sent so far is in the kernel's hands, so the
  /// owner may shut the socket down. Acquire: pairs with the release in settle(), made
  /// after the send(2) that took the bytes.
  std::size_t queued() const noexcept { return queued_.load(std::memory_order_acquire); }
  /// The errno of the first transmit that failed (EPIPE, ECONNRESET, ...), or 0. Relaxed:
  /// a flag the owner polls; the bytes it concerns are dropped, nothing else is read.
  int error() const noexcept { return error_.load(std::memory_order_relaxed); }

 private:
  friend class NetworkStack;
  int fd_;
  std::string sendq_;  // under the stack lock only
  std::atomic<std::size_t> queued_{0};
  std::atomic<int> error_{0};
};

/// Which path a send took.
struct SendResult {
  SendPath path = SendPath::direct;
};

/// Totals since construction (relaxed: a recent value, not a cut).
struct NetworkStackCounters {
  std::uint64_t sends = 0;               ///< send() calls
  std::uint64_t sends_deferred = 0;      ///< sends left to the lock holder
  std::uint64_t send_lock_contends = 0;  ///< sends whose try-lock failed (tcp_send_ni_lock_contends)
  std::uint64_t pool_empty_sends = 0;    ///< sends that found no free buffer (tcp_send_nonb_pool_empty)
  std::uint64_t transmits = 0;           ///< send(2) calls made, by any thread, for this stack
  std::uint64_t short_transmits = 0;     ///< send(2) calls that wrote less than asked (the rest queued)
  std::uint64_t pushes = 0;              ///< push() calls (an owner's output edge)
  std::uint64_t transmit_errors = 0;     ///< send(2) calls that failed (EPIPE, ECONNRESET, ...; not EAGAIN)
  std::uint64_t bytes_sent = 0;
  StackLockCounters lock;
  PacketPoolCounters pool;
};

/// One stack. Guarantee: every send's bytes are handed to send(2) in order per socket, by
/// a thread holding this stack's lock, or dropped once a transmit on that socket failed; a
/// send() that returns `deferred` has its bytes transmitted (or queued on the socket) before
/// the current holder's unlock returns. Order per socket holds because one thread sends on
/// it: its deferred send runs before the holder lets go, so its next send, which must take
/// the lock, comes after.
/// Cost: an uncontended send is a pool take and give-back to the reserve, a copy, two CASes
/// on the lock word and the send(2); a contended one two CASes and a copy, no syscall, with
/// the send(2) paid by the holder.
class NetworkStack {
 public:
  explicit NetworkStack(NetworkStackOptions options = {});
  NetworkStack(const NetworkStack&) = delete;
  NetworkStack& operator=(const NetworkStack&) = delete;

  /// Send `len` bytes on `socket` through this stack: all are accepted (see queued()).
  /// `counts`, if given, is the calling thread's record: it is bumped for the events this
  /// call caused (contends, deferrals, pool-empty sends, and the wakes and hand-offs of any
  /// unlock this call made).
  SendResult send(StackSocket& socket, const void* data, std::size_t len,
                  stats::ThreadStats* counts = nullptr) noexcept;
  /// The same for the pieces of `parts` (an answer's head and body, a pipelined run), as one
  /// send: copied into one packet when they fit, as a real stack fills a packet, and handed
  /// to one send(2) in every case, so that a head and its body are not two syscalls.
  SendResult send(StackSocket& socket, std::span<const iovec> parts, stats::ThreadStats* counts = nullptr) noexcept;

  /// The socket's output edge: take the lock (blocking) and transmit its send queue.
  /// Returns what is still queued.
  std::size_t push(StackSocket& socket, stats::ThreadStats* counts = nullptr) noexcept;

  /// Close the socket once every send on it has run: takes the lock (blocking), so every
  /// send deferred before this call has run (each holder runs its list before it releases),
  /// drops what is still queued, then close(2). A socket that sends through a stack must be
  /// closed through it: closed behind the stack's back, its number could be reused and a
  /// deferred send land on another connection. Returns close(2)'s result.
  int close(StackSocket& socket, stats::ThreadStats* counts = nullptr) noexcept;

  NetworkStackCounters snapshot() const noexcept;
  nlohmann::json to_json() const;

  StackLock& lock() noexcept { return lock_; }
  PacketPool<>& pool() noexcept { return pool_; }

 private:
  static void transmit_deferred(void* self, std::uint64_t socket, std::uint64_t packet_and_len) noexcept;
  void transmit(StackSocket& socket, const char* data, std::size_t len) noexcept;
  std::size_t send_now(StackSocket& socket, const char* data, std::size_t len) noexcept;
  void settle(StackSocket& socket, std::size_t taken) noexcept;
  void lock_blocking(stats::ThreadStats* counts) noexcept;
  static void count_wait(stats::ThreadStats* counts, std::int64_t waited_ns) noexcept;
  /// A blocking take longer than this is counted as long (stack_lock_long_waits): a hundred
  /// times the longest critical section the model has (a send(2) of a packet and a deferral
  /// list of 32 more).
  static constexpr std::int64_t kLongWaitNs = 1'000'000;
  void unlock(stats::ThreadStats* counts) noexcept;
  /// The lock's before_release: under the lock, on every path that unlocks it.
  static StackLockOptions with_top_up(StackLockOptions lock, NetworkStack* stack) noexcept;
  void top_up_locked() noexcept;
  static void count_unlock(stats::ThreadStats* counts, const UnlockResult& r) noexcept;

  StackLock lock_;
  PacketPool<> pool_;
  alignas(64) std::atomic<std::uint64_t> sends_{0};
  std::atomic<std::uint64_t> sends_deferred_{0};
  std::atomic<std::uint64_t> send_lock_contends_{0};
  std::atomic<std::uint64_t> pool_empty_sends_{0};
  std::atomic<std::uint64_t> pushes_{0};
  // Written only under the stack lock (by the holder), read by snapshot() at any time.
  alignas(64) std::atomic<std::uint64_t> transmits_{0};
  std::atomic<std::uint64_t> short_transmits_{0};
  std::atomic<std::uint64_t> transmit_errors_{0};
  std::atomic<std::uint64_t> bytes_sent_{0};
};

}  // namespace handoff::stack
