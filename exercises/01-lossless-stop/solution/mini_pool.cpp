// exercises/01-lossless-stop/solution: a poison pill per thread, queued behind the jobs.
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
  for (;;) {
    Job* job = nullptr;
    if (::recv(lane_[1], &job, sizeof job, 0) != sizeof job) return;
    if (job == nullptr) return;  // the pill: everything sent before it has been taken
    (*job)();
    delete job;
  }
}

void MiniPool::stop() {
  // relaxed: only stop() itself reads the flag here, on the one thread that calls it.
  if (stopping_.exchange(true, std::memory_order_relaxed)) return;
  // The lane is a FIFO: one pill per thread, sent after every job, reaches the threads
  // only once the jobs ahead of it have been taken. Each thread takes exactly one pill.
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    Job* pill = nullptr;
    ::send(lane_[0], &pill, sizeof pill, 0);
  }
  for (auto& t : threads_) t.join();
}

}  // namespace exercise
