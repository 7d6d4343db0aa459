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
  // What a wrong stop left in the lane (a mutant's unrun jobs) is freed, not leaked: the
  // tests judge which jobs ran, and the leak checker must not abort the run before they do.
  // After a right stop the lane is empty and this reads nothing.
  Job* left = nullptr;
  while (::recv(lane_[1], &left, sizeof left, MSG_DONTWAIT) == sizeof left) delete left;
  ::close(lane_[0]);
  ::close(lane_[1]);
}

void MiniPool::submit(Job job) {
  Job* p = new Job(std::move(job));
  ::send(lane_[0], &p, sizeof p, 0);
}

// The negative controls (CMakeLists.txt, MUTANTS) build this file again with one part of
// the stop wrong, as a learner might: the threads also check a stop flag between jobs, which
// overtakes the jobs still queued (STOP_FLAG_BETWEEN_JOBS); or one pill for the whole pool,
// so every thread but one waits for ever (ONE_PILL_FOR_ALL).
void MiniPool::thread_main() {
#if defined(STOP_FLAG_BETWEEN_JOBS)
  // acquire: pairs with the exchange in stop(), as the starter's does.
  while (!stopping_.load(std::memory_order_acquire)) {
#else
  for (;;) {
#endif
    Job* job = nullptr;
    if (::recv(lane_[1], &job, sizeof job, 0) != sizeof job) return;
    if (job == nullptr) return;  // the pill: everything sent before it has been taken
    (*job)();
    delete job;
  }
}

void MiniPool::stop() {
#if defined(STOP_FLAG_BETWEEN_JOBS)
  if (stopping_.exchange(true, std::memory_order_acq_rel)) return;  // pairs with the threads' load
#else
  // relaxed: only stop() itself reads the flag here, on the one thread that calls it.
  if (stopping_.exchange(true, std::memory_order_relaxed)) return;
#endif
  // The lane is a FIFO: one pill per thread, sent after every job, reaches the threads
  // only once the jobs ahead of it have been taken. Each thread takes exactly one pill.
#if defined(ONE_PILL_FOR_ALL)
  const std::size_t pills = 1;
#else
  const std::size_t pills = threads_.size();
#endif
  for (std::size_t i = 0; i < pills; ++i) {
    Job* pill = nullptr;
    ::send(lane_[0], &pill, sizeof pill, 0);
  }
  for (auto& t : threads_) t.join();
}

}  // namespace exercise
