// sync/wake_channel: one pool thread's own wake: a 32-bit state word and a futex on it
// (chapter 03).
#include "sync/wake_channel.h"

#include "sync/futex.h"

namespace handoff::sync {

void WakeChannel::sleep(std::uint32_t seq, stats::ThreadStats& stats) noexcept {
  const std::uint32_t parked = parked_word(seq);
  // acquire (in still_parked): what the waker did before it chose this thread is visible
  // once we see WOKEN.
  while (still_parked(seq)) {
    // Sleeps only while the word still says `parked` (sync/futex: a wake that lands between
    // our load and this call is not lost). EINTR and spurious returns just look again.
    sync::futex_wait(word_, parked);
    stats.add(stats::Counter::handoff_recvs);
    stats.add(stats::Counter::syscalls);
  }
  set(Kind::running);  // off WOKEN: only this thread leaves it
}

// [wake_channel.wake]
bool WakeChannel::wake(std::uint32_t seq, stats::ThreadStats& stats) noexcept {
  // The claim's CAS decides who owns the way out of PARKED, and its acq_rel is the wake's
  // edge both ways (WakeWord::claim_wake). If it fails, we touch nothing.
  if (!claim_wake(seq)) return false;
  // The word says WOKEN now, so a FUTEX_WAIT that has not begun returns at once, and one in
  // progress is woken here. If the thread is not asleep yet this wakes nobody, and nothing
  // is left behind.
  sync::futex_wake_one(word_);
  stats.add(stats::Counter::handoff_sends);
  stats.add(stats::Counter::syscalls);
  return true;
}
// [wake_channel.wake]

}  // namespace handoff::sync
