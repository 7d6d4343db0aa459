// stack/network_stack: a model of one user-level network stack that sends go through
// (chapter 05).
#include "stack/network_stack.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace handoff::stack {

std::optional<StackTopology> parse_stack_topology(std::string_view text) noexcept {
  if (text == "shared") return StackTopology::shared;
  if (text == "per-worker") return StackTopology::per_worker;
  return std::nullopt;
}

std::string_view stack_topology_name(StackTopology t) noexcept {
  return t == StackTopology::shared ? "shared" : "per-worker";
}

std::int64_t buzz_ns_from_us(std::int64_t buzz_us) noexcept { return buzz_us < 0 ? -1 : buzz_us * 1000; }

NetworkStack::NetworkStack(NetworkStackOptions options) : lock_(options.lock), pool_(options.pool) {}

namespace {
// relaxed: statistics; they order nothing.
void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept { c.fetch_add(n, std::memory_order_relaxed); }
void bump(stats::ThreadStats* counts, stats::Counter c) noexcept {
  if (counts != nullptr) counts->add(c);
}
}  // namespace

ssize_t NetworkStack::transmit(int fd, const void* data, std::size_t len, int* error) noexcept {
  const ssize_t n = ::send(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (error != nullptr) *error = n < 0 ? errno : 0;
  bump(transmits_);
  if (n < 0) {
    bump(transmit_errors_);
  } else {
    bump(bytes_sent_, static_cast<std::uint64_t>(n));
    if (static_cast<std::size_t>(n) < len) bump(short_transmits_);
  }
  return n;
}

// The deferred send, run by the lock holder: a = fd, b = packet index (high 32) and length.
void NetworkStack::transmit_deferred(void* self, std::uint64_t fd, std::uint64_t packet_and_len) noexcept {
  auto* stack = static_cast<NetworkStack*>(self);
  const auto packet = static_cast<std::uint32_t>(packet_and_len >> 32);
  const auto len = static_cast<std::uint32_t>(packet_and_len);
  stack->transmit(static_cast<int>(fd), stack->pool_.data(packet), len, nullptr);
  stack->pool_.release_locked(packet);
}

void NetworkStack::unlock(stats::ThreadStats* counts) noexcept {
  const UnlockResult r = lock_.unlock();
  if (r.woke) bump(counts, stats::Counter::stack_lock_wakes);
  if (r.handed_off) bump(counts, stats::Counter::stack_lock_handoffs);
}

// [network_stack.send]
SendResult NetworkStack::send(int fd, const void* data, std::size_t len, stats::ThreadStats* counts) noexcept {
  bump(sends_);
  SendResult result;
  if (len > pool_.packet_bytes()) {
    if (lock_.lock().contended) {
      bump(send_lock_contends_);
      bump(counts, stats::Counter::stack_lock_contends);
    }
    result.path = SendPath::large;
    result.written = transmit(fd, data, len, &result.error);
    unlock(counts);
    return result;
  }

  const std::int32_t packet = pool_.try_take();  // lock-free
  if (packet == PacketPool::kNone) {
    // Nothing to fill: take the lock (blocking), refill the free pool from the reserve and
    // send under the lock.
    bump(pool_empty_sends_);
    bump(counts, stats::Counter::stack_pool_empty_sends);
    if (!lock_.try_lock()) {
      bump(send_lock_contends_);
      bump(counts, stats::Counter::stack_lock_contends);
      lock_.lock();
    }
    pool_.refill_locked();
    result.path = SendPath::pool_empty;
    result.written = transmit(fd, data, len, &result.error);
    unlock(counts);
    return result;
  }
  const auto index = static_cast<std::uint32_t>(packet);
  std::memcpy(pool_.data(index), data, len);

  if (lock_.try_lock()) {
    result.path = SendPath::direct;
    result.written = transmit(fd, pool_.data(index), len, &result.error);
    pool_.release_locked(index);
    unlock(counts);
    return result;
  }
  // The lock is held: leave the send to its holder (Onload's deferred send).
  bump(send_lock_contends_);
  bump(counts, stats::Counter::stack_lock_contends);
  const DeferredWork work{&NetworkStack::transmit_deferred, this, static_cast<std::uint64_t>(fd),
                          (std::uint64_t{index} << 32) | static_cast<std::uint32_t>(len)};
  UnlockResult unlocked;
  const DeferOutcome outcome = lock_.lock_or_defer(work, &unlocked);
  if (unlocked.woke) bump(counts, stats::Counter::stack_lock_wakes);
  if (unlocked.handed_off) bump(counts, stats::Counter::stack_lock_handoffs);
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
      break;
  }
  result.written = static_cast<ssize_t>(len);  // handed over; the transmit's own outcome is counted
  return result;
}
// [network_stack.send]

int NetworkStack::close(int fd, stats::ThreadStats* counts) noexcept {
  if (lock_.lock().contended) bump(counts, stats::Counter::stack_lock_contends);
  const int rc = ::close(fd);
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
