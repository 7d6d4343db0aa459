// exercises/01-lossless-stop/learners: a correct stop that keeps the starter's flag: once it
// is up, a thread drains the lane without blocking, running the jobs it finds, and leaves at
// the first end message or when the lane is empty. It never takes more than one end message,
// so a sibling idle in recv() always has its own; and every job sent before the stop is
// queued before the flag goes up, so an empty lane means it has been taken.
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
  while (!stopping_.load(std::memory_order_acquire)) {  // pairs with the exchange in stop()
    Job* job = nullptr;
    if (::recv(lane_[1], &job, sizeof job, 0) != sizeof job) return;
    if (job == nullptr) return;
    (*job)();
    delete job;
  }
  Job* job = nullptr;
  while (::recv(lane_[1], &job, sizeof job, MSG_DONTWAIT) == sizeof job) {
    if (job == nullptr) return;  // an end message: mine, and no more
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
