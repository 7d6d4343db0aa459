// exercises/03-wake-newest: a thread's futex on its own state word (chapter 03).
// Role: the two system calls of a sleep and a wake, behind two functions, so that the
// board's protocol (board.cpp and your wake_newest.cpp) compiles unchanged in the grader's
// model, where the futex is Relacy's mutex and condition variable (model/board_model.cpp).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>

namespace exercise {

/// FUTEX_WAIT and FUTEX_WAKE on one 32-bit word.
class Futex {
 public:
  /// Sleep while `word` still says `expected` when the kernel looks, for at most `limit`.
  void wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::chrono::nanoseconds limit) noexcept {
    const auto ns = limit.count();
    timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    ::syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
  }
  /// Wake one thread asleep on `word`.
  void wake(std::atomic<std::uint32_t>& word) noexcept {
    ::syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }

 private:
  static std::uint32_t* address(std::atomic<std::uint32_t>& word) noexcept {
    return reinterpret_cast<std::uint32_t*>(&word);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  }
};

}  // namespace exercise
