// sync/futex: the two futex(2) calls every sleeper in the library makes on a 32-bit atomic
// word (chapter 03; one home since issue 26).
// Role: one copy of the system call and of the reason it cannot lose a wake: FUTEX_WAIT
// sleeps only if the word still holds the value the caller last saw when the kernel looks
// (under the futex's own lock), so a waker that changes the word and then calls futex_wake
// either stops the sleep before it starts or ends it. Callers loop on their own condition:
// EINTR, a timeout and spurious returns just look again. Process-private futexes only.
#pragma once

#include <atomic>
#include <cstdint>

namespace handoff::sync {

/// Sleep while `word` holds `expected`, at most `timeout_ns` (0 or less: no limit). Returns
/// at once if the word has changed already.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t timeout_ns = 0) noexcept;

/// Wake at most one thread asleep in futex_wait on `word`. Harmless when none is: a wake
/// that finds nobody waiting leaves nothing behind.
void futex_wake_one(std::atomic<std::uint32_t>& word) noexcept;

}  // namespace handoff::sync
