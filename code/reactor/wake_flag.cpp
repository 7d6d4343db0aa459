// reactor/wake_flag: a loop thread's "I am about to wait" flag and the socket that wakes it
// (chapter 03, taken out of pool/completion_ring in chapter 04).
// Changed in chapter 04: an eventfd channel for the callback loop.
#include "reactor/wake_flag.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <tuple>

#include "net/socket_pair.h"

namespace handoff::reactor {

WakeFlag::WakeFlag(bool fences, Channel channel) : flag_(fences) {
  if (channel == Channel::datagram) {
    std::tie(loop_end_, producer_end_) = net::datagram_pair();
  } else {
    loop_end_ = net::Fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!loop_end_) throw std::system_error(errno, std::generic_category(), "eventfd");
  }
}

// [wake_flag.poke]
bool WakeFlag::poke_if_waiting(stats::ThreadStats* stats, stats::Counter counted) {
  // The caller's push (or pop), then read the loop's flag: a store then a load, fenced in
  // WaitFlag::claim_poke (pairs with the fence in announce_wait()'s WaitFlag::announce).
  // Of all the threads that see the flag raised, exactly one claims the poke.
  if (!flag_.claim_poke()) return false;
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
  // The flag must be visible before the loop re-checks its queues: a store then a load,
  // fenced in WaitFlag::announce (pairs with the fence in poke_if_waiting()'s claim_poke).
  flag_.announce();
}

void WakeFlag::end_wait() noexcept { flag_.end(); }
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
  return flag_.raised();  // a snapshot for tests, ordered by nothing
}

}  // namespace handoff::reactor
