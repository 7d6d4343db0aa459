// sync/futex: the two futex(2) calls every sleeper in the library makes (chapter 03).
#include "sync/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace handoff::sync {

namespace {

// std::atomic<std::uint32_t> is the word itself (always lock-free, no padding), which is how
// libstdc++'s own atomic waits hand it to the kernel.
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "the futex is the word itself");
std::uint32_t* futex_address(std::atomic<std::uint32_t>& word) noexcept {
  return reinterpret_cast<std::uint32_t*>(&word);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns) noexcept {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout_ns > 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000);
    tsp = &ts;
  }
  ::syscall(SYS_futex, futex_address(word), FUTEX_WAIT_PRIVATE, expected, tsp, nullptr, 0);
}

void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept {
  ::syscall(SYS_futex, futex_address(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace handoff::sync
