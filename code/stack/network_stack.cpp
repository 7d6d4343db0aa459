// stack/network_stack: a model of one user-level network stack that sends go through
// (chapter 05).
#include "stack/network_stack.h"

#include <nlohmann/json.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "stats/thread_cpu.h"

namespace handoff::stack {

std::int64_t buzz_ns_from_us(std::int64_t buzz_us) noexcept { return buzz_us < 0 ? -1 : buzz_us * 1000; }

StackLockOptions NetworkStack::with_top_up(StackLockOptions lock, NetworkStack* stack) noexcept {
  lock.before_release = [](void* self) noexcept { static_cast<NetworkStack*>(self)->top_up_locked(); };
  lock.before_release_context = stack;
  return lock;
}

NetworkStack::NetworkStack(NetworkStackOptions options) : lock_(with_top_up(options.lock, this)), pool_(options.pool) {}

void NetworkStack::top_up_locked() noexcept {
  // The holder tops the lock-free pool up from the reserve before it lets go, on every path
  // that unlocks (the lock calls this from its unlock, after the deferred sends it ran have
  // given their buffers back), so a send finds the pool empty only when more replies are in
  // flight at once than the pool and the last top-up hold: at a new peak, as seed 004
  // counted them (47-50 a run).
  if (pool_.reserve_locked() >= pool_.refill_batch()) pool_.refill_locked();
}

namespace {
// relaxed: statistics; they order nothing.
void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept { c.fetch_add(n, std::memory_order_relaxed); }
void bump(stats::ThreadStats* counts, stats::Counter c) noexcept {
  if (counts != nullptr) counts->add(c);
}
}  // namespace

// Under the lock. One send(2); the bytes it took leave the socket's count.
std::size_t NetworkStack::send_now(StackSocket& socket, const char* data, std::size_t len) noexcept {
  ssize_t n;
  do {
    n = ::send(socket.fd_, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  bump(transmits_);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
    bump(transmit_errors_);
    int none = 0;  // the first error is the one the owner sees
    socket.error_.compare_exchange_strong(none, errno, std::memory_order_relaxed);
    return 0;
  }
  const std::size_t taken = n < 0 ? 0 : static_cast<std::size_t>(n);
  bump(bytes_sent_, taken);
  if (taken < len) bump(short_transmits_);
  return taken;
}

// Under the lock: `taken` bytes of the socket's are now the kernel's (or dropped).
void NetworkStack::settle(StackSocket& socket, std::size_t taken) noexcept {
  // release: pairs with queued()'s acquire, so an owner that reads 0 sees its bytes' send(2)
  // (and may shut the socket down after it).
  socket.queued_.fetch_sub(taken, std::memory_order_release);
}

// Under the lock: send `len` bytes after whatever the socket already has queued; keep what
// the kernel does not take, or drop everything once the socket has failed.
void NetworkStack::transmit(StackSocket& socket, const char* data, std::size_t len) noexcept {
  if (socket.error() == 0 && socket.sendq_.empty()) {
    const std::size_t taken = send_now(socket, data, len);
    if (socket.error() == 0) {
      socket.sendq_.append(data + taken, len - taken);
      settle(socket, taken);
      return;
    }
  }
  if (socket.error() != 0) {  // the peer is gone: nothing for it will ever be sent
    settle(socket, socket.sendq_.size() + len);
    std::string().swap(socket.sendq_);
    return;
  }
  socket.sendq_.append(data, len);  // behind the queue, then push what the kernel will take
  const std::size_t taken = send_now(socket, socket.sendq_.data(), socket.sendq_.size());
  if (socket.error() != 0) {
    settle(socket, socket.sendq_.size());
    std::string().swap(socket.sendq_);
    return;
  }
  socket.sendq_.erase(0, taken);
  settle(socket, taken);
}

// The deferred send, run by the lock holder: a = the socket, b = packet index (high 32) and
// length.
void NetworkStack::transmit_deferred(void* self, std::uint64_t socket, std::uint64_t packet_and_len) noexcept {
  auto* stack = static_cast<NetworkStack*>(self);
  const auto packet = static_cast<std::uint32_t>(packet_and_len >> 32);
  const auto len = static_cast<std::uint32_t>(packet_and_len);
  stack->transmit(*reinterpret_cast<StackSocket*>(socket), reinterpret_cast<const char*>(stack->pool_.data(packet)),
                  len);
  stack->pool_.release_locked(packet);
}

// A blocking take; a contended one is timed and its sleeps charged to the calling thread.
void NetworkStack::lock_blocking(stats::ThreadStats* counts) noexcept {
  if (lock_.try_lock()) return;
  bump(send_lock_contends_);
  bump(counts, stats::Counter::stack_lock_contends);
  const std::int64_t start = stats::monotonic_ns();
  const LockResult r = lock_.lock();
  if (counts != nullptr) counts->add(stats::Counter::stack_lock_sleeps, r.sleeps);
  count_wait(counts, stats::monotonic_ns() - start);
}

void NetworkStack::count_wait(stats::ThreadStats* counts, std::int64_t waited_ns) noexcept {
  if (counts == nullptr) return;
  counts->add(stats::Counter::stack_lock_wait_us, static_cast<std::uint64_t>(waited_ns) / 1000);
  if (waited_ns > kLongWaitNs) counts->add(stats::Counter::stack_lock_long_waits);
}

void NetworkStack::unlock(stats::ThreadStats* counts) noexcept {
  count_unlock(counts, lock_.unlock());  // the lock's unlock tops the pool up (top_up_locked)
}

// Charge an unlock's wake and hand-off to the thread that made it.
void NetworkStack::count_unlock(stats::ThreadStats* counts, const UnlockResult& r) noexcept {
  if (r.woke) bump(counts, stats::Counter::stack_lock_wakes);
  if (r.handed_off) bump(counts, stats::Counter::stack_lock_handoffs);
}

SendResult NetworkStack::send(StackSocket& socket, const void* data, std::size_t len,
                              stats::ThreadStats* counts) noexcept {
  const iovec one{const_cast<void*>(data), len};  // read only: send() never writes through it
  return send(socket, std::span<const iovec>(&one, 1), counts);
}

namespace {
// The pieces as one buffer for a send(2) that no packet holds (too large, or the pool empty):
// the first piece itself when it is the only one, else a copy in this thread's scratch.
std::pair<const char*, std::size_t> joined(std::span<const iovec> parts, std::size_t len) {
  if (parts.size() == 1) return {static_cast<const char*>(parts[0].iov_base), len};
  thread_local std::string scratch;
  scratch.clear();
  for (const iovec& p : parts) scratch.append(static_cast<const char*>(p.iov_base), p.iov_len);
  return {scratch.data(), len};
}
}  // namespace

// [network_stack.send]
SendResult NetworkStack::send(StackSocket& socket, std::span<const iovec> parts, stats::ThreadStats* counts) noexcept {
  bump(sends_);
  std::size_t len = 0;
  for (const iovec& p : parts) len += p.iov_len;
  // Counted before any thread can transmit them: settle() only ever subtracts what was added.
  // relaxed: the owner's own program order; settle()'s release publishes the rest.
  socket.queued_.fetch_add(len, std::memory_order_relaxed);
  SendResult result;
  if (len > pool_.packet_bytes()) {
    lock_blocking(counts);
    result.path = SendPath::large;
    const auto [bytes, n] = joined(parts, len);
    transmit(socket, bytes, n);
    unlock(counts);
    return result;
  }

  const std::int32_t packet = pool_.try_take();  // lock-free
  if (packet == PacketPool<>::kNone) {
    // Nothing to fill: take the lock (blocking), refill the free pool from the reserve and
    // send under the lock.
    bump(pool_empty_sends_);
    bump(counts, stats::Counter::stack_pool_empty_sends);
    lock_blocking(counts);
    pool_.refill_locked();
    result.path = SendPath::pool_empty;
    const auto [bytes, n] = joined(parts, len);
    transmit(socket, bytes, n);
    unlock(counts);
    return result;
  }
  const auto index = static_cast<std::uint32_t>(packet);
  std::size_t at = 0;  // the pieces, one after the other, in the packet
  for (const iovec& p : parts) {
    std::memcpy(pool_.data(index) + at, p.iov_base, p.iov_len);
    at += p.iov_len;
  }

  // [network_stack.send]
  // [network_stack.send_locked]
  if (lock_.try_lock()) {
    result.path = SendPath::direct;
    transmit(socket, reinterpret_cast<const char*>(pool_.data(index)), len);
    pool_.release_locked(index);
    unlock(counts);
    return result;
  }
  // The lock is held: leave the send to its holder (Onload's deferred send).
  bump(send_lock_contends_);
  bump(counts, stats::Counter::stack_lock_contends);
  const DeferredWork work{&NetworkStack::transmit_deferred, this, reinterpret_cast<std::uint64_t>(&socket),
                          (std::uint64_t{index} << 32) | static_cast<std::uint32_t>(len)};
  UnlockResult unlocked;
  const std::int64_t start = stats::monotonic_ns();
  const DeferOutcome outcome = lock_.lock_or_defer(work, &unlocked);
  count_unlock(counts, unlocked);  // an unlock this call made, if the lock came free meanwhile
  switch (outcome) {
    case DeferOutcome::deferred:
      bump(sends_deferred_);
      bump(counts, stats::Counter::stack_deferred_work);
      result.path = SendPath::deferred;
      break;
    case DeferOutcome::ran_here:
      result.path = SendPath::direct;  // the holder let go in between: sent here
      break;
    case DeferOutcome::ran_after_wait:
      result.path = SendPath::after_wait;
      count_wait(counts, stats::monotonic_ns() - start);  // blocked behind a full deferral list
      break;
  }
  return result;
}
// [network_stack.send_locked]

std::size_t NetworkStack::push(StackSocket& socket, stats::ThreadStats* counts) noexcept {
  bump(pushes_);
  lock_blocking(counts);
  if (!socket.sendq_.empty()) {
    std::string queued;  // counted in queued_ already: transmit() only settles
    queued.swap(socket.sendq_);
    transmit(socket, queued.data(), queued.size());
  }
  const std::size_t left = socket.queued();
  unlock(counts);
  return left;
}

int NetworkStack::close(StackSocket& socket, stats::ThreadStats* counts) noexcept {
  lock_blocking(counts);
  settle(socket, socket.sendq_.size());
  std::string().swap(socket.sendq_);
  const int rc = ::close(socket.fd_);
  socket.fd_ = -1;
  unlock(counts);
  return rc;
}

NetworkStackCounters NetworkStack::snapshot() const noexcept {
  // relaxed throughout: statistics.
  NetworkStackCounters c;
  c.sends = sends_.load(std::memory_order_relaxed);
  c.sends_deferred = sends_deferred_.load(std::memory_order_relaxed);
  c.send_lock_contends = send_lock_contends_.load(std::memory_order_relaxed);
  c.pool_empty_sends = pool_empty_sends_.load(std::memory_order_relaxed);
  c.pushes = pushes_.load(std::memory_order_relaxed);
  c.transmits = transmits_.load(std::memory_order_relaxed);
  c.short_transmits = short_transmits_.load(std::memory_order_relaxed);
  c.transmit_errors = transmit_errors_.load(std::memory_order_relaxed);
  c.bytes_sent = bytes_sent_.load(std::memory_order_relaxed);
  c.lock = lock_.counters();
  c.pool = pool_.counters();
  return c;
}

nlohmann::json NetworkStack::to_json() const {
  const NetworkStackCounters c = snapshot();
  return {
      {"buzz_ns", lock_.options().buzz_ns},
      {"handoff_after_ns", lock_.options().handoff_after_ns},
      {"sends", c.sends},
      {"deferred_sends", c.sends_deferred},
      {"tcp_send_ni_lock_contends", c.send_lock_contends},
      {"tcp_send_nonb_pool_empty", c.pool_empty_sends},
      {"transmits", c.transmits},
      {"short_transmits", c.short_transmits},
      {"pushes", c.pushes},
      {"transmit_errors", c.transmit_errors},
      {"bytes_sent", c.bytes_sent},
      {"lock_contends", c.lock.lock_contends},
      {"lock_buzz_catches", c.lock.lock_buzz_catches},
      {"lock_sleeps", c.lock.lock_sleeps},
      {"lock_wakes", c.lock.lock_wakes},
      {"deferred_work", c.lock.deferred_work},
      {"deferred_full", c.lock.deferred_full},
      {"lock_handoffs", c.lock.lock_handoffs},
      {"pool_takes", c.pool.takes},
      {"pool_refills", c.pool.refills},
  };
}

}  // namespace handoff::stack
