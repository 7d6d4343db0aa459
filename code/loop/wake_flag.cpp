// loop/wake_flag: a loop thread's "I am about to wait" flag and the socket that wakes it
// (chapter 03, taken out of pool/completion_ring in chapter 04).
#include "loop/wake_flag.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <tuple>

#include "net/socket_pair.h"

namespace handoff::loop {

WakeFlag::WakeFlag(bool fences, Channel channel) : fences_(fences) {
  if (channel == Channel::datagram) {
    std::tie(loop_end_, producer_end_) = net::datagram_pair();
  } else {
    loop_end_ = net::Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!loop_end_) throw std::system_error(errno, std::generic_category(), "eventfd");
  }
}

// [wake_flag.poke]
bool WakeFlag::poke_if_waiting(stats::ThreadStats* stats, stats::Counter counted) {
  // The caller's push (or pop), then read the loop's flag: a store then a load. Pairs with
  // the fence in announce_wait() between raising the flag and the loop's re-check.
  // (fences_ is false only in the broken variant a stress test runs.)
  if (fences_) std::atomic_thread_fence(std::memory_order_seq_cst);
  // exchange: of all the threads that see the flag raised, exactly one pokes. relaxed
  // (both): the fence above orders the load; the item itself is published by its queue.
  if (!waiting_.load(std::memory_order_relaxed) || !waiting_.exchange(false, std::memory_order_relaxed)) {
    return false;
  }
  if (stats != nullptr) stats->add(counted);  // before the poke: the loop it wakes sees the count
  const std::uint64_t poke = 1;
  for (;;) {
    const ssize_t n = producer_end_ ? ::send(producer_end_.get(), &poke, sizeof poke, 0)
                                    : ::write(loop_end_.get(), &poke, sizeof poke);
    if (stats != nullptr) {
      stats->add(stats::Counter::handoff_sends);
      stats->add(stats::Counter::syscalls);
    }
    if (n == static_cast<ssize_t>(sizeof poke)) return true;
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "send(loop poke)");
  }
}
// [wake_flag.poke]

// [wake_flag.loop]
void WakeFlag::announce_wait() noexcept {
  // relaxed: the fence that follows orders it before the re-check's loads.
  waiting_.store(true, std::memory_order_relaxed);
  // The flag must be visible before the loop re-checks its queues: a store then a load.
  // Pairs with the fence in poke_if_waiting(), after a producer's push.
  if (fences_) std::atomic_thread_fence(std::memory_order_seq_cst);
}

void WakeFlag::end_wait() noexcept {
  // relaxed: a poke sent for a wait that ends anyway costs one spurious turn; the queues
  // are drained either way.
  waiting_.store(false, std::memory_order_relaxed);
}
// [wake_flag.loop]

void WakeFlag::take_poke(stats::ThreadStats* loop_stats) {
  // One recv: a producer pokes at most once per raised flag, so there is rarely a second
  // poke, and if there is, the level-triggered descriptor reports it again next turn.
  std::uint64_t word;
  if (producer_end_) {
    ::recv(loop_end_.get(), &word, sizeof word, MSG_DONTWAIT);
  } else {
    [[maybe_unused]] const ssize_t n = ::read(loop_end_.get(), &word, sizeof word);  // resets the count
  }
  if (loop_stats != nullptr) {
    loop_stats->add(stats::Counter::handoff_recvs);
    loop_stats->add(stats::Counter::syscalls);
  }
}

bool WakeFlag::waiting() const noexcept {
  // relaxed: a snapshot for tests, ordered by nothing.
  return waiting_.load(std::memory_order_relaxed);
}

}  // namespace handoff::loop
