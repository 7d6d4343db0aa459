// exercises/01-lossless-stop/learners: a learner's stop that keeps the starter's flag and,
// once it is up, drains what is left in the lane without blocking, running every job it
// finds ("nothing queued is lost, and nobody blocks"). It takes the end messages too: a
// sibling idle in recv() can lose its own to the drain and wait for ever.
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
  while (!stopping_.load(std::memory_order_acquire)) {  // pairs with the exchange in stop()
    Job* job = nullptr;
    if (::recv(lane_[1], &job, sizeof job, 0) != sizeof job) return;
    if (job == nullptr) break;
    (*job)();
    delete job;
  }
  // Stopping: run whatever is still queued, without waiting for more.
  Job* job = nullptr;
  while (::recv(lane_[1], &job, sizeof job, MSG_DONTWAIT) == sizeof job) {
    if (job == nullptr) continue;  // a wake-up, not a job
    (*job)();
    delete job;
  }
}

void MiniPool::stop() {
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;  // pairs with the threads' load
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    Job* pill = nullptr;
    ::send(lane_[0], &pill, sizeof pill, 0);
  }
  for (auto& t : threads_) t.join();
}

}  // namespace exercise
