// pool/tests/park_gate: hold a pool thread at one of the pool's test hooks (chapters 02-03).
// Role: let a test stop a thread at an exact step (between a park's two steps, after its
// unpark, before its recv) so that a race that happens once in a thousand runs happens
// every time; and the bounded polling wait the tests use beside it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace handoff::pool::testing {

using namespace std::chrono_literals;

/// Holds the first pool thread that reaches the hook it is called from, while armed, until
/// the test lets it go, so the test can act exactly inside the window a race would need.
/// Unarmed, the hook returns at once. release_and_rearm() re-arms it as it releases, so
/// the thread's next pass stops here too. A held thread lets itself go after 5 s.
class ParkGate {
 public:
  void thread_side() {
    std::unique_lock lock(mu_);
    if (!armed_) return;
    armed_ = false;
    arrived_ = true;
    cv_.notify_all();
    cv_.wait_for(lock, 5s, [this] { return released_; });
    released_ = false;
  }
  void arm() {
    std::lock_guard lock(mu_);
    armed_ = true;
  }
  bool wait_arrival(std::chrono::milliseconds limit) {
    std::unique_lock lock(mu_);
    const bool ok = cv_.wait_for(lock, limit, [this] { return arrived_; });
    arrived_ = false;
    return ok;
  }
  void release_and_rearm() {
    std::lock_guard lock(mu_);
    released_ = true;
    armed_ = true;
    cv_.notify_all();
  }
  void release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  /// Lets a held thread go and holds no more: before stop(), so that a re-armed gate does not
  /// keep the pool thread for its 5 s.
  void open() {
    std::lock_guard lock(mu_);
    armed_ = false;
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, arrived_ = false, released_ = false;
};

/// Polls `pred` every 50 µs until it holds (true) or `limit` passes (false).
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 2s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(50us);
  }
  return true;
}

}  // namespace handoff::pool::testing
