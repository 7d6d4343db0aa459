// pool/datagram_pool: the hand-off over datagram socketpairs (chapter 01, the "before").
#include "pool/datagram_pool.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <string>
#include <system_error>
#include <tuple>

#include "net/socket_pair.h"
#include "pool/handler_slot.h"
#include "pool/run_job.h"

namespace handoff::pool {

namespace {
/// A datagram carries one pointer: ownership crosses, the payload stays where it is.
constexpr std::size_t kPointerBytes = sizeof(void*);
}  // namespace

/// Everything a pool thread touches. The pool and each of its threads hold a reference, so
/// a thread that stop() let go of inside a handler still finds it when the handler returns.
struct DatagramPool::Core {
  explicit Core(const PoolConfig& config)
      : slots(std::make_unique<HandlerSlot[]>(static_cast<std::size_t>(config.threads))) {
    std::tie(lane_loop, lane_pool) = net::datagram_pair();
    std::tie(done_loop, done_pool) = net::datagram_pair();
  }
  void thread_main(stats::ThreadStats& stats, HandlerSlot& slot);
  void emit(stats::ThreadStats& stats, Frame* frame);

  net::Fd lane_loop, lane_pool;                // jobs: loop → pool
  net::Fd done_loop, done_pool;                // frames: pool → loop
  std::unique_ptr<HandlerSlot[]> slots;        // one per thread, by index
  std::atomic<bool> past_deadline{false};      // raised by stop() at its deadline (see run_job)
  std::atomic<std::size_t> deadline_drops{0};  // jobs dropped for the deadline; read after the joins
};

DatagramPool::DatagramPool(const PoolConfig& config) : config_(config), core_(std::make_shared<Core>(config)) {}

DatagramPool::~DatagramPool() { stop(kNoDeadline); }

void DatagramPool::bind(reactor::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
                        stats::ThreadStats& loop_stats) {
  reactor_ = &reactor;
  loop_stats_ = &loop_stats;
  sink_ = &sink;
  done_endpoint_.pool = this;
  done_endpoint_.handler = &DatagramPool::drain_completions;
  lane_endpoint_.pool = this;
  lane_endpoint_.handler = &DatagramPool::flush_backlog;
  reactor.add(core_->done_loop.get(), EPOLLIN, &done_endpoint_);
  start_pool_threads(threads_, config_.threads, config_.worker_index, registry,
                     [core = core_](std::size_t i, stats::ThreadStats& st) { core->thread_main(st, core->slots[i]); });
}

// [dgram.submit]
void DatagramPool::submit(Job* job) {
  if (backlog_.empty() && send_to_lane(job)) return;
  backlog_.push_back(job);  // the lane is full: keep order, retry when it turns writable
  if (!watching_lane_) {
    reactor_->add(core_->lane_loop.get(), EPOLLOUT, &lane_endpoint_);
    watching_lane_ = true;
  }
}

bool DatagramPool::send_to_lane(void* ptr) {
  const ssize_t n = ::send(core_->lane_loop.get(), &ptr, kPointerBytes, MSG_DONTWAIT);
  loop_stats_->add(stats::Counter::handoff_sends);
  loop_stats_->add(stats::Counter::syscalls);
  if (n == static_cast<ssize_t>(kPointerBytes)) return true;
  loop_stats_->add(stats::Counter::handoff_eagain);
  if (errno != EAGAIN && errno != EWOULDBLOCK) {
    throw std::system_error(errno, std::generic_category(), "send(lane)");
  }
  return false;
}
// [dgram.submit]

void DatagramPool::flush_backlog() {
  while (!backlog_.empty() && send_to_lane(backlog_.front())) backlog_.pop_front();
  if (backlog_.empty() && watching_lane_) {
    reactor_->remove(core_->lane_loop.get(), &lane_endpoint_);
    watching_lane_ = false;
  }
}

// [dgram.drain]
void DatagramPool::drain_completions() {
  for (;;) {
    Frame* frame = nullptr;
    const ssize_t n = ::recv(core_->done_loop.get(), &frame, kPointerBytes, MSG_DONTWAIT);
    loop_stats_->add(stats::Counter::handoff_recvs);
    loop_stats_->add(stats::Counter::syscalls);
    if (n != static_cast<ssize_t>(kPointerBytes)) return;  // EAGAIN: the channel is empty
    sink_->on_frame(*frame);
    delete frame;
  }
}
// [dgram.drain]

// [dgram.thread]
void DatagramPool::Core::thread_main(stats::ThreadStats& stats, HandlerSlot& slot) {
  stats.attach_current_thread();
  for (;;) {
    Job* job = nullptr;
    const ssize_t n = ::recv(lane_pool.get(), &job, kPointerBytes, 0);  // blocks: the park
    stats.add(stats::Counter::handoff_recvs);
    stats.add(stats::Counter::syscalls);
    if (n != static_cast<ssize_t>(kPointerBytes)) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    if (job == nullptr) break;  // the poison pill
    const RunOutcome outcome =
        run_job(job, RunContext{stats, slot, past_deadline}, [this, &stats](Frame* f) { emit(stats, f); });
    if (outcome == RunOutcome::thread_abandoned) return;  // let go of by stop(): touch nothing of the loop's
    // relaxed (both): a count, read by stop() after the join that orders it.
    if (outcome == RunOutcome::dropped && past_deadline.load(std::memory_order_relaxed)) {
      deadline_drops.fetch_add(1, std::memory_order_relaxed);
    }
  }
  stats.detach_current_thread();
  slot.finish();  // the last touch: stop() may join and free the loop's world after it
}

void DatagramPool::Core::emit(stats::ThreadStats& stats, Frame* frame) {
  for (;;) {
    const ssize_t n = ::send(done_pool.get(), &frame, kPointerBytes, 0);  // blocks if full
    stats.add(stats::Counter::handoff_sends);
    stats.add(stats::Counter::syscalls);
    if (n == static_cast<ssize_t>(kPointerBytes)) return;
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "send(done)");
  }
}
// [dgram.thread]

std::size_t DatagramPool::stop(std::int64_t deadline_ns) {
  if (stopped_ || threads_.empty()) {
    stopped_ = true;
    return 0;
  }
  stopped_ = true;
  std::size_t dropped_here = 0;
  for (std::size_t i = 0; i < threads_.size(); ++i) backlog_.push_back(nullptr);  // one pill each
  auto at_deadline = [&] {
    // relaxed: threads look at it before each job; a late look is covered by the let-go.
    core_->past_deadline.store(true, std::memory_order_relaxed);
    std::erase_if(backlog_, [&](void* p) {  // drop the jobs the lane has not taken; keep the pills
      if (p == nullptr) return false;
      delete static_cast<Job*>(p);
      ++dropped_here;
      return true;
    });
  };
  // Keep the lane fed and the completions drained until every thread has taken its pill:
  // a thread blocked sending a frame needs the loop to read, and the loop is us.
  auto turn = [&] {
    flush_backlog();
    drain_completions();
    pollfd fds[2] = {{core_->done_loop.get(), POLLIN, 0}, {core_->lane_loop.get(), POLLOUT, 0}};
    ::poll(fds, backlog_.empty() ? 1 : 2, 1);
    loop_stats_->add(stats::Counter::syscalls);
  };
  settle_threads(threads_, core_->slots.get(), deadline_ns, at_deadline, turn);
  // Every thread has finished or been let go of; none reads the lane any more. What it
  // still holds was left for threads stuck in handlers.
  for (;;) {
    Job* job = nullptr;
    const ssize_t n = ::recv(core_->lane_pool.get(), &job, kPointerBytes, MSG_DONTWAIT);
    loop_stats_->add(stats::Counter::handoff_recvs);
    loop_stats_->add(stats::Counter::syscalls);
    if (n != static_cast<ssize_t>(kPointerBytes)) break;
    if (job != nullptr) {
      delete job;
      ++dropped_here;
    }
  }
  backlog_.clear();  // pills for threads let go of
  drain_completions();
  if (watching_lane_) {
    reactor_->remove(core_->lane_loop.get(), &lane_endpoint_);
    watching_lane_ = false;
  }
  reactor_->remove(core_->done_loop.get(), &done_endpoint_);
  loop_stats_->add(stats::Counter::jobs_abandoned, dropped_here);
  // relaxed: the threads that counted have been joined (the join orders their counts).
  return dropped_here + core_->deadline_drops.load(std::memory_order_relaxed);
}

}  // namespace handoff::pool
