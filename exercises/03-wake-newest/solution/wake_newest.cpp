// exercises/03-wake-newest/solution: choose the newest PARKED word, CAS it to WOKEN, and
// lower the count only when the CAS won.
#include "board.h"

namespace exercise {

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one part of
// the answer taken out, as a learner might: the CAS made a plain store (the wake then
// cannot see that the thread cancelled), a lost CAS giving up instead of choosing again,
// the CAS made relaxed (x86 runs it the same; the model sees that nothing orders what the
// waker wrote before the wake with what the woken thread reads), or the futex wake sent
// before the CAS.
bool Board::wake_newest() {
  for (;;) {
    int best = -1;
    std::uint32_t best_ticket = 0;
    for (int i = 0; i < threads_; ++i) {
      std::uint32_t ticket;
      if (parked_ticket(i, ticket) && (best < 0 || ticket > best_ticket)) {
        best = i;
        best_ticket = ticket;
      }
    }
    if (best < 0) return false;
    if (hooks_.after_choice) hooks_.after_choice(best);
#if defined(WAKE_NUDGE_FIRST)
    nudge(best);  // mutant: the wake before the word changes; a sleeper that has not looked yet sleeps on
#endif
#if defined(WAKE_PLAIN_STORE)
    words_[best].store(kWoken, std::memory_order_release);
    const bool won = true;
#else
    std::uint32_t expected = parked_word(best_ticket);
    // acq_rel. acquire: pairs with announce()'s release, so the thread's increment of the
    // count happens before our decrement. release: pairs with sleep()'s acquire load, so
    // what we did before the wake is visible to the woken thread. Failure (relaxed): the
    // thread cancelled (or cancelled and parked again); we touch nothing.
#if defined(WAKE_CAS_RELAXED)
    const bool won =  // mutant: the claim decides who owns the wake, but publishes nothing
        words_[best].compare_exchange_strong(expected, kWoken, std::memory_order_relaxed, std::memory_order_relaxed);
#else
    const bool won =
        words_[best].compare_exchange_strong(expected, kWoken, std::memory_order_acq_rel, std::memory_order_relaxed);
#endif
#endif
    if (won) {
      // The CAS made us the owner of the thread's way out of PARKED: lower its count, once.
      // relaxed: the CAS's acquire ordered the thread's increment before it.
      parked_.fetch_sub(1, std::memory_order_relaxed);
#if !defined(WAKE_NUDGE_FIRST)
      nudge(best);  // after the CAS: the futex wait compares the word, so this wake is not lost
#endif
      return true;
    }
#if defined(WAKE_WITHOUT_RETRY)
    return false;
#endif
    // The thread left PARKED by itself (and lowered the count): choose again.
  }
}

}  // namespace exercise
