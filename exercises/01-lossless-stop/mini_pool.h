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

 private:
  void thread_main();
  int lane_[2] = {-1, -1};  // [0]: submit sends here; [1]: threads receive here
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};  // stop() has begun (read by the threads in the starter)
};

}  // namespace exercise
