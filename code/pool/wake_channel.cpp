// pool/wake_channel: one pool thread's own wake: a 32-bit state word and a futex on it
// (chapter 03).
#include "pool/wake_channel.h"

#include "sync/futex.h"

namespace handoff::pool {

bool WakeChannel::cancel_park(std::uint32_t seq) noexcept {
  std::uint32_t expected = parked_word(seq);
  if (word_.compare_exchange_strong(expected, static_cast<std::uint32_t>(Kind::running), std::memory_order_relaxed,
                                    std::memory_order_relaxed)) {
    return true;
  }
  set(Kind::running);  // it was WOKEN: only this thread leaves WOKEN
  return false;
}

void WakeChannel::sleep(std::uint32_t seq, stats::ThreadStats& stats) noexcept {
  const std::uint32_t parked = parked_word(seq);
  // acquire: pairs with the release half of wake()'s CAS: what the waker did before it
  // chose this thread (pushed a job, raised the stop flag) is visible once we see WOKEN.
  while (word_.load(std::memory_order_acquire) == parked) {
    // Sleeps only while the word still says `parked` (sync/futex: a wake that lands between
    // our load and this call is not lost). EINTR and spurious returns just look again.
    sync::futex_wait(word_, parked);
    stats.add(stats::Counter::handoff_recvs);
    stats.add(stats::Counter::syscalls);
  }
  set(Kind::running);  // off WOKEN: only this thread leaves it
}

bool WakeChannel::parked_seq(std::uint32_t& seq) const noexcept {
  // relaxed: a candidate only; wake()'s CAS decides.
  const std::uint32_t w = word_.load(std::memory_order_relaxed);
  if ((w & 3U) != static_cast<std::uint32_t>(Kind::parked)) return false;
  seq = w >> 2;
  return true;
}

// [wake_channel.wake]
bool WakeChannel::wake(std::uint32_t seq, stats::ThreadStats& stats) noexcept {
  std::uint32_t expected = parked_word(seq);
  // acq_rel. acquire: pairs with announce_parked()'s release (the thread's parked count went
  // up before we lower it). release: pairs with sleep()'s acquire load (see there). Failure
  // (relaxed): the thread cancelled its park or was woken already; we touch nothing.
  if (!word_.compare_exchange_strong(expected, static_cast<std::uint32_t>(Kind::woken), std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
    return false;
  }
  // The word says WOKEN now, so a FUTEX_WAIT that has not begun returns at once, and one in
  // progress is woken here. If the thread is not asleep yet this wakes nobody, and nothing
  // is left behind.
  sync::futex_wake_one(word_);
  stats.add(stats::Counter::handoff_sends);
  stats.add(stats::Counter::syscalls);
  return true;
}
// [wake_channel.wake]

}  // namespace handoff::pool
