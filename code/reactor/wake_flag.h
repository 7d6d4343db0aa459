// reactor/wake_flag: a loop thread's "I am about to wait" flag and the socket that wakes it
// (chapter 03, taken out of pool/completion_ring in chapter 04).
// Changed in chapter 04: an eventfd channel for the callback loop.
// Role: chapter 03's loop-side wake protocol with the channel that carries its poke: the
// loop raises the flag, fences, re-checks its queues, then waits in epoll on loop_fd(); a
// producer pushes, fences, reads the flag and pokes the channel only if it was raised. The
// protocol itself (the flag and both fences) has its one copy in reactor/wait_flag; this adds
// the channel (a datagram socketpair or an eventfd). pool/completion_ring (frames),
// evloop/event_loop (call_soon_threadsafe) and evloop/coordinator wake their loops through it.
#pragma once

#include <atomic>

#include "net/fd.h"
#include "reactor/wait_flag.h"
#include "stats/thread_stats.h"

namespace handoff::reactor {

/// The flag-and-poke. Two store→load sequences meet here (the store-buffering shape; each
/// needs a seq_cst fence):
///   loop:      announce_wait(): raise the flag → fence → (caller) re-check its queues
///   producer:  (caller) push → poke_if_waiting(): fence → read the flag → poke if raised
/// At least one side sees the other's store, so an item never waits while the loop sleeps
/// with no poke coming. Cost: nothing but the fence while the loop is busy; a waiting loop
/// costs one poke and one read per wait (exchange: one poke per raised flag).
class WakeFlag {
 public:
  /// What carries a poke. A datagram socketpair (chapter 03's completion ring, as measured
  /// there: one send, one recv) or an eventfd (chapter 04's callback loop, as libuv's
  /// uv_async_send and Asio's scheduler wake theirs: one write, one read, and no socket
  /// buffer or peer lookup in the kernel's path).
  enum class Channel { datagram, eventfd };

  /// `fences` false (FOR TESTS ONLY) drops BOTH seq_cst fences: the broken variant. The
  /// flag's store and load stay plain (relaxed) either way, so on x86 each side is a `mov`
  /// store then a `mov` load, which the store buffer may reorder.
  explicit WakeFlag(bool fences = true, Channel channel = Channel::datagram);

  WakeFlag(const WakeFlag&) = delete;
  WakeFlag& operator=(const WakeFlag&) = delete;

  // ---- a producer's side (any thread), after its push (or a pop that makes room)
  /// Fence, read the flag, and poke the loop if it was raised. `stats`, when given, counts
  /// `counted` (before the send, so the loop it wakes sees the count) and the send's
  /// syscalls. Returns whether this call sent the poke.
  bool poke_if_waiting(stats::ThreadStats* stats, stats::Counter counted);

  // ---- the loop's side
  /// The descriptor the loop's reactor watches (readable: a poke).
  int loop_fd() const noexcept { return loop_end_.get(); }
  /// Raise the flag and fence; the caller then re-checks everything a poke covers.
  void announce_wait() noexcept;
  /// Lower the flag: the loop will not wait after all, or it has woken.
  void end_wait() noexcept;
  /// Read one poke off the loop's socket (readiness said there is one).
  void take_poke(stats::ThreadStats* loop_stats);
  /// Whether the flag is raised (for tests: a snapshot, ordered by nothing).
  bool waiting() const noexcept;

 private:
  net::Fd loop_end_, producer_end_;  // pokes: producers → loop (an eventfd: loop_end_ only)
  // Written by the loop at every wait, read by producers at every push: its own line. The
  // protocol (the flag and both fences) is reactor/wait_flag.h's.
  alignas(64) WaitFlag<> flag_;
};

}  // namespace handoff::reactor
