// exercises/05-starved-waiter: the lock word's futex (chapter 05).
// Role: the two system calls of a sleep and a wake behind one class, so that the lock
// (tiny_lock.cpp and your unlock.cpp) compiles unchanged in the grader's model, where the
// futex is Relacy's mutex and condition variable (model/tiny_lock_model.cpp).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace exercise {

/// FUTEX_WAIT and FUTEX_WAKE on one 32-bit word.
class Futex {
 public:
  /// Sleep only if `word` still equals `expected` when the kernel looks, so a change that
  /// lands after the caller's last load is not slept through. timeout_ns 0: no timeout.
  void wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) noexcept {
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout_ns > 0) {
      ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
      ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
      tsp = &ts;
    }
    ::syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
  }
  /// Wake at most `count` threads asleep on `word`.
  void wake(std::atomic<std::uint32_t>& word, int count) noexcept {
    ::syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
  }

 private:
  static std::uint32_t* address(std::atomic<std::uint32_t>& word) noexcept {
    return reinterpret_cast<std::uint32_t*>(&word);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  }
};

}  // namespace exercise
