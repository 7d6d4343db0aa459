// pool/wake_channel: one pool thread's own wake: a 32-bit state word and a futex on it
// (chapter 03).
#include "pool/wake_channel.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace handoff::pool {

namespace {

// The futex calls on the state word. std::atomic<std::uint32_t> is the word itself (always
// lock-free, no padding), which is how libstdc++'s own atomic waits hand it to the kernel.
std::uint32_t* futex_address(std::atomic<std::uint32_t>& word) noexcept {
  return reinterpret_cast<std::uint32_t*>(&word);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

}  // namespace

// [wake_channel.sleep]
void WakeChannel::sleep(std::uint32_t seq, stats::ThreadStats& stats) noexcept {
  const std::uint32_t parked = parked_word(seq);
  // acquire (in still_parked): what the waker did before it chose this thread is visible
  // once we see WOKEN.
  while (still_parked(seq)) {
    // Sleeps only if the word still equals `parked` when the kernel looks (under the
    // futex's own lock), so a wake that lands between our load and this call is not lost:
    // the call returns at once (EAGAIN). EINTR and spurious returns just look again.
    ::syscall(SYS_futex, futex_address(word_), FUTEX_WAIT_PRIVATE, parked, nullptr, nullptr, 0);
    stats.add(stats::Counter::handoff_recvs);
    stats.add(stats::Counter::syscalls);
  }
  set(Kind::running);  // off WOKEN: only this thread leaves it
}
// [wake_channel.sleep]

// [wake_channel.wake]
bool WakeChannel::wake(std::uint32_t seq, stats::ThreadStats& stats) noexcept {
  // The claim's CAS decides who owns the way out of PARKED, and its acq_rel is the wake's
  // edge both ways (WakeWord::claim_wake). If it fails, we touch nothing.
  if (!claim_wake(seq)) return false;
  // The word says WOKEN now, so a FUTEX_WAIT that has not begun returns at once, and one in
  // progress is woken here. If the thread is not asleep yet this wakes nobody, and nothing
  // is left behind.
  ::syscall(SYS_futex, futex_address(word_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  stats.add(stats::Counter::handoff_sends);
  stats.add(stats::Counter::syscalls);
  return true;
}
// [wake_channel.wake]

}  // namespace handoff::pool
