// exercises/01-lossless-stop/learners: a learner's stop that lets the threads finish the
// queue first ("join, then tell them to go"): it joins before it sends the end messages, so
// the threads, idle in recv() once the queue is empty, never get them, and stop() waits for
// ever in its first join.
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
    if (job == nullptr) return;
    (*job)();
    delete job;
  }
}

void MiniPool::stop() {
  if (stopping_.exchange(true, std::memory_order_relaxed)) return;  // only stop() reads it
  for (auto& t : threads_) t.join();                                // let them finish what is queued
  for (std::size_t i = 0; i < threads_.size(); ++i) {
    Job* pill = nullptr;
    ::send(lane_[0], &pill, sizeof pill, 0);
  }
}

}  // namespace exercise
