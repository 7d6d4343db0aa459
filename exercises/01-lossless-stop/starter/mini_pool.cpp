// exercises/01-lossless-stop/starter: compiles, stops promptly, and loses jobs. Fix it.
#include <sys/socket.h>
#include <unistd.h>

#include "mini_pool.h"

namespace exercise {

using Job = std::function<void()>;

MiniPool::MiniPool(int threads) {
  ::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, lane_);
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { thread_main(); });
}

MiniPool::~MiniPool() {
  stop();
  ::close(lane_[0]);
  ::close(lane_[1]);
}

void MiniPool::submit(Job job) {
  Job* p = new Job(std::move(job));
  ::send(lane_[0], &p, sizeof p, 0);
}

void MiniPool::thread_main() {
  // Check the stop flag between jobs, so a stopping pool stops promptly.
  while (!stopping_.load(std::memory_order_acquire)) {  // pairs with the store in stop()
    Job* job = nullptr;
    if (::recv(lane_[1], &job, sizeof job, 0) != sizeof job) return;
    if (job == nullptr) return;
    (*job)();
    delete job;
  }
}

void MiniPool::stop() {
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;  // pairs with the threads' load
  // Wake every thread blocked in recv() with a pill each, so it sees the flag.
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    Job* pill = nullptr;
    ::send(lane_[0], &pill, sizeof pill, 0);
  }
  for (auto& t : threads_) t.join();
}

}  // namespace exercise
