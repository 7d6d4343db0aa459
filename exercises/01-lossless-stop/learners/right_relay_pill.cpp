// exercises/01-lossless-stop/learners: a correct stop with one end message for the whole
// pool, passed on: a thread that takes it sends it back into the lane before it exits, so
// the next thread finds it behind whatever is still queued. Every job sent before the stop
// is ahead of it, and each thread takes it once.
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
  Job* left = nullptr;
  while (::recv(lane_[1], &left, sizeof left, MSG_DONTWAIT) == sizeof left) delete left;
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
    if (job == nullptr) {
      ::send(lane_[0], &job, sizeof job, 0);  // pass it on to the next thread
      return;
    }
    (*job)();
    delete job;
  }
}

void MiniPool::stop() {
  if (stopping_.exchange(true, std::memory_order_relaxed)) return;  // only stop() reads it
  Job* pill = nullptr;
  ::send(lane_[0], &pill, sizeof pill, 0);
  for (auto& t : threads_) t.join();
}

}  // namespace exercise
