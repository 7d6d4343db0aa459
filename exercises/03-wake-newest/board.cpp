// exercises/03-wake-newest: the thread's side of the board, given. Read it first.
#include "board.h"

namespace exercise {

Board::Board(int threads, Hooks hooks)
    : threads_(threads),
      hooks_(std::move(hooks)),
      words_(std::make_unique<Atoms::atomic<std::uint32_t>[]>(static_cast<std::size_t>(threads))) {}

std::uint32_t Board::announce(int i) {
  // relaxed: a ticket ranks parks for the waker's choice; it orders nothing. (Tickets use
  // 30 bits; the exercise ignores their wrap after 2^30 parks.)
  const std::uint32_t ticket = tickets_.fetch_add(1, std::memory_order_relaxed) & ((1U << 30) - 1);
  // relaxed: the release store below orders it before the waker's decrement, which follows
  // an acquire CAS that read the announcement.
  parked_.fetch_add(1, std::memory_order_relaxed);
  // release: pairs with the acquire of the waker's CAS.
  words_[i].store(parked_word(ticket), std::memory_order_release);
  // The announcement must be visible before the caller re-checks for work: a store then a
  // load. Pairs with the fence a producer puts between its push and its read of the count.
  // This fence: mfence on x86-64 (GCC emits lock or $0,(%rsp)), dmb ish on AArch64.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return ticket;
}

bool Board::cancel(int i, std::uint32_t ticket) {
  std::uint32_t expected = parked_word(ticket);
  // relaxed: the CAS decides who owns the way out of PARKED by its atomicity alone.
  if (words_[i].compare_exchange_strong(expected, kRunning, std::memory_order_relaxed, std::memory_order_relaxed)) {
    parked_.fetch_sub(1, std::memory_order_relaxed);  // ours to lower: our own increment is sequenced before
    return true;
  }
  words_[i].store(kRunning, std::memory_order_relaxed);  // it was WOKEN; only this thread leaves WOKEN
  return false;
}

bool Board::sleep(int i, std::uint32_t ticket, std::chrono::milliseconds limit) {
  const std::uint32_t parked = parked_word(ticket);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // acquire: pairs with the release half of the waker's CAS.
  while (words_[i].load(std::memory_order_acquire) == parked) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::nanoseconds::zero()) return !cancel(i, ticket);  // time's up: leave by ourselves
    // Sleeps only while the word still says PARKED(ticket) when the kernel looks.
    futex_.wait(words_[i], parked, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
  }
  words_[i].store(kRunning, std::memory_order_relaxed);  // off WOKEN: only this thread leaves it
  return true;
}

bool Board::parked_ticket(int i, std::uint32_t& ticket) const noexcept {
  // relaxed: a candidate only; the waker's CAS decides.
  const std::uint32_t w = words_[i].load(std::memory_order_relaxed);
  if ((w & 3U) != static_cast<std::uint32_t>(Kind::parked)) return false;
  ticket = w >> 2;
  return true;
}

void Board::nudge(int i) noexcept { futex_.wake(words_[i]); }

// relaxed (both): snapshots for tests, ordered by nothing.
int Board::parked() const noexcept { return parked_.load(std::memory_order_relaxed); }
Board::Kind Board::kind(int i) const noexcept {
  return static_cast<Kind>(words_[i].load(std::memory_order_relaxed) & 3U);
}

}  // namespace exercise
