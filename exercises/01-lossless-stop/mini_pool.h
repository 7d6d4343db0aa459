// exercises/01-lossless-stop: a small pool of blocking threads fed over a datagram
// socketpair, like chapter 01's DatagramPool but with jobs that are plain functions.
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace exercise {

/// Threads block in recv() on one SOCK_DGRAM socketpair; submit() sends a pointer to a
/// heap-allocated job. stop() must run every job submitted before it, then stop every
/// thread, and join them.
class MiniPool {
 public:
  explicit MiniPool(int threads);
  ~MiniPool();
  void submit(std::function<void()> job);
  void stop();
  /// Whether stop() has begun. The tests wait for it before they let running jobs finish,
  /// so that jobs still queued are queued when the stop begins. (relaxed: a test polls it,
  /// and nothing is read on the strength of it.)
  bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }

 private:
  void thread_main();
  int lane_[2] = {-1, -1};  // [0]: submit sends here; [1]: threads receive here
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};  // stop() has begun (set first in stop(); the starter's threads read it)
};

}  // namespace exercise
