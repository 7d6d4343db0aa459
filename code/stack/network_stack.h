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
//     bytes under the lock (counted: pool-empty sends);
//  2. needs the stack lock to transmit: a try-lock; if it is held, the send is left in the
//     lock word for the holder (the deferred send), who transmits it before it unlocks; past
//     the deferral limit the thread blocks on the lock and transmits itself;
//  3. the transmit is a real ::send(fd, MSG_DONTWAIT | MSG_NOSIGNAL) of the buffer, made by
//     whichever thread holds the lock; the buffer then goes back to the reserve.
// A send larger than one packet buffer skips the pool and sends from the caller's bytes
// under the lock (taken blocking).
//
// What is weaker than a real stack: a deferred send's result reaches no caller (a short
// write or an error is only counted), so the model suits replies that fit the socket's send
// buffer, as a keep-alive HTTP server's do; there is no send queue per socket and no
// retransmission. Use it on blocking or non-blocking sockets alike: it never blocks on one.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "stack/packet_pool.h"
#include "stack/stack_lock.h"
#include "stats/thread_stats.h"

namespace handoff::stack {

/// How the workers of a server map onto stacks (--stack shared|per-worker).
enum class StackTopology {
  shared,     ///< one stack for every worker: the seed's pool topology (and its stall)
  per_worker  ///< one stack per worker thread: no lock is ever contended across workers
};
std::optional<StackTopology> parse_stack_topology(std::string_view text) noexcept;
std::string_view stack_topology_name(StackTopology t) noexcept;
/// --stack-buzz-us N (N >= 0 microseconds, or -1 for ever) as StackLockOptions::buzz_ns.
std::int64_t buzz_ns_from_us(std::int64_t buzz_us) noexcept;

struct NetworkStackOptions {
  StackLockOptions lock;
  PacketPoolOptions pool;
};

/// How one send went.
enum class SendPath {
  direct,          ///< the try-lock succeeded: transmitted on this thread
  deferred,        ///< the lock was held: left to the holder, who transmits before unlocking
  after_wait,      ///< the deferral list was full: this thread blocked on the lock and transmitted
  pool_empty,      ///< no packet buffer: this thread took the lock, refilled and transmitted
  large,           ///< more than a packet buffer: transmitted under the lock, taken blocking
};

struct SendResult {
  SendPath path = SendPath::direct;
  /// send(2)'s return when this thread transmitted (bytes, or -1 with errno saved in `error`);
  /// for a deferred send, the length handed over (its outcome is only counted).
  ssize_t written = 0;
  int error = 0;
};

/// Totals since construction (relaxed: a recent value, not a cut).
struct NetworkStackCounters {
  std::uint64_t sends = 0;               ///< send() calls
  std::uint64_t sends_deferred = 0;      ///< sends left to the lock holder
  std::uint64_t send_lock_contends = 0;  ///< sends whose try-lock failed (tcp_send_ni_lock_contends)
  std::uint64_t pool_empty_sends = 0;    ///< sends that found no free buffer (tcp_send_nonb_pool_empty)
  std::uint64_t transmits = 0;           ///< send(2) calls made, by any thread, for this stack
  std::uint64_t short_transmits = 0;     ///< send(2) calls that wrote less than asked
  std::uint64_t transmit_errors = 0;     ///< send(2) calls that failed (EAGAIN, EPIPE, ...)
  std::uint64_t bytes_sent = 0;
  StackLockCounters lock;
  PacketPoolCounters pool;
};

/// One stack. Guarantee: every send's bytes are handed to send(2) exactly once, by a thread
/// holding this stack's lock, and a send() that returns `deferred` has its bytes sent before
/// the current holder's unlock returns. Sends on one fd from one thread keep their order
/// (a deferred send is queued behind nothing of the same thread's: the thread's next send
/// finds the lock held by the same holder, or free after the holder ran the queue).
/// Cost: an uncontended send is a pool take and give-back to the reserve, a copy, two CASes
/// on the lock word and the send(2); a contended one two CASes and a copy, no syscall, with
/// the send(2) paid by the holder.
class NetworkStack {
 public:
  explicit NetworkStack(NetworkStackOptions options = {});
  NetworkStack(const NetworkStack&) = delete;
  NetworkStack& operator=(const NetworkStack&) = delete;

  /// Send `len` bytes on `fd` through this stack. `counts`, if given, is the calling thread's
  /// record: it is bumped for the events this call caused (contends, deferrals, pool-empty
  /// sends, and the wakes and hand-offs of any unlock this call made).
  SendResult send(int fd, const void* data, std::size_t len, stats::ThreadStats* counts = nullptr) noexcept;

  /// Close `fd` once every send on it has been transmitted: takes the lock (blocking), so
  /// every send deferred before this call has run (each holder runs its list before it
  /// releases), then close(2). A socket that sends through a stack must be closed through it:
  /// closed behind the stack's back, its number could be reused and a deferred send land on
  /// another connection. Returns close(2)'s result.
  int close(int fd, stats::ThreadStats* counts = nullptr) noexcept;

  NetworkStackCounters snapshot() const noexcept;
  nlohmann::json to_json() const;

  StackLock& lock() noexcept { return lock_; }
  PacketPool& pool() noexcept { return pool_; }

 private:
  static void transmit_deferred(void* self, std::uint64_t fd, std::uint64_t packet_and_len) noexcept;
  ssize_t transmit(int fd, const void* data, std::size_t len, int* error) noexcept;
  void unlock(stats::ThreadStats* counts) noexcept;

  StackLock lock_;
  PacketPool pool_;
  alignas(64) std::atomic<std::uint64_t> sends_{0};
  std::atomic<std::uint64_t> sends_deferred_{0};
  std::atomic<std::uint64_t> send_lock_contends_{0};
  std::atomic<std::uint64_t> pool_empty_sends_{0};
  // Written only under the stack lock (by the holder), read by snapshot() at any time.
  alignas(64) std::atomic<std::uint64_t> transmits_{0};
  std::atomic<std::uint64_t> short_transmits_{0};
  std::atomic<std::uint64_t> transmit_errors_{0};
  std::atomic<std::uint64_t> bytes_sent_{0};
};

}  // namespace handoff::stack
