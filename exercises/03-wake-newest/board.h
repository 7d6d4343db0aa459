// exercises/03-wake-newest: per-thread state words and a parked count; the waker to write.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

// The seam. The tests build the board on the standard atomics (sync/atomics.h) and the
// kernel's futex (futex.h); the grader's model (model/board_model.cpp) builds board.cpp and
// your wake_newest.cpp once more on Relacy's atomics and a modelled futex: it defines
// EXERCISE_MODEL_SEAM and its own exercise::Atoms and exercise::Futex before it includes
// this header.
#ifndef EXERCISE_MODEL_SEAM
#include "futex.h"
#include "sync/atomics.h"
namespace exercise {
using Atoms = handoff::sync::StdAtomics;
}  // namespace exercise
#endif

namespace exercise {

/// The elastic pool's wake channels (chapter 03), cut down to their words. Each thread i
/// owns a 32-bit state word: RUNNING, PARKED with the ticket of its park, or WOKEN; the
/// board also keeps how many threads are counted parked. A thread parks by counting itself
/// and announcing PARKED(ticket) (announce), re-checks for work, and then either cancels
/// (cancel: a CAS PARKED(ticket) -> RUNNING) or sleeps until its word leaves PARKED(ticket)
/// (sleep). Every thread leaves each park exactly once, and the count is lowered once per
/// park, by whoever moved the word off PARKED.
class Board {
 public:
  enum class Kind : std::uint32_t { running = 0, parked = 2, woken = 3 };

  struct Hooks {
    /// Run by the waker between choosing thread `chosen` and its attempt to wake it (the
    /// tests use it to let the thread cancel, or cancel and park again, exactly there).
    std::function<void(int chosen)> after_choice;
  };
  explicit Board(int threads, Hooks hooks = {});

  // ---- thread i's side (given, board.cpp)

  /// Take a ticket, count itself parked, announce PARKED(ticket), fence. The ticket.
  std::uint32_t announce(int i);
  /// The re-check found work: leave PARKED by a CAS to RUNNING. True when the CAS won (this
  /// side lowered the count); false when a waker had already moved the word to WOKEN (the
  /// waker lowered it). Either way the word says RUNNING afterwards.
  bool cancel(int i, std::uint32_t ticket);
  /// Sleep while the word says PARKED(ticket), for at most `limit`. True when woken; false
  /// when the limit passed and the thread cancelled its park itself (and lowered the count).
  bool sleep(int i, std::uint32_t ticket, std::chrono::milliseconds limit);

  // ---- the waker's side

  /// THE EXERCISE (starter/, solution/): wake the thread that parked last (the highest
  /// ticket among the words that say PARKED), lowering the count for it, exactly once.
  /// False when no thread is parked. Call hooks_.after_choice(i) between choosing i and
  /// trying to wake it.
  bool wake_newest();

  // ---- snapshots, for tests

  int parked() const noexcept;
  Kind kind(int i) const noexcept;
  int threads() const noexcept { return threads_; }

 private:
  friend struct BoardModel;  // the grader's model reads the words and the count when its threads end
  static constexpr std::uint32_t parked_word(std::uint32_t ticket) noexcept {
    return (ticket << 2) | static_cast<std::uint32_t>(Kind::parked);
  }
  static constexpr std::uint32_t kRunning = static_cast<std::uint32_t>(Kind::running);
  static constexpr std::uint32_t kWoken = static_cast<std::uint32_t>(Kind::woken);
  /// Given: whether thread i's word says PARKED, and with which ticket (a relaxed snapshot).
  bool parked_ticket(int i, std::uint32_t& ticket) const noexcept;
  /// Given: FUTEX_WAKE on thread i's word, after the word has left PARKED.
  void nudge(int i) noexcept;

  const int threads_;
  Hooks hooks_;
  std::unique_ptr<Atoms::atomic<std::uint32_t>[]> words_;  // one per thread
  Atoms::atomic<int> parked_{0};
  Atoms::atomic<std::uint32_t> tickets_{0};
  Futex futex_;
};

}  // namespace exercise
