// pool/datagram_pool: the hand-off over datagram socketpairs (chapter 01, the "before").
#include "pool/datagram_pool.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <tuple>

#include "net/socket_pair.h"

namespace handoff::pool {

namespace {
/// A datagram carries one pointer: ownership crosses, the payload stays where it is.
constexpr std::size_t kPointerBytes = sizeof(void*);
}  // namespace

DatagramPool::DatagramPool(const PoolConfig& config) : config_(config) {
  std::tie(lane_loop_, lane_pool_) = net::datagram_pair();
  std::tie(done_loop_, done_pool_) = net::datagram_pair();
}

DatagramPool::~DatagramPool() { stop(); }

void DatagramPool::bind(loop::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
                        stats::ThreadStats& loop_stats) {
  reactor_ = &reactor;
  loop_stats_ = &loop_stats;
  sink_ = &sink;
  done_endpoint_.pool = this;
  done_endpoint_.handler = &DatagramPool::drain_completions;
  lane_endpoint_.pool = this;
  lane_endpoint_.handler = &DatagramPool::flush_backlog;
  reactor.add(done_loop_.get(), EPOLLIN, &done_endpoint_);
  for (int i = 0; i < config_.threads; ++i) {
    auto& st = registry.add("pool-" + std::to_string(config_.worker_index) + "-" + std::to_string(i), "pool");
    running_.fetch_add(1, std::memory_order_relaxed);  // only stop() reads it, after this
    threads_.emplace_back([this, &st] { thread_main(st); });
  }
}

// [dgram.submit]
void DatagramPool::submit(Job* job) {
  if (backlog_.empty() && send_to_lane(job)) return;
  backlog_.push_back(job);  // the lane is full: keep order, retry when it turns writable
  if (!watching_lane_) {
    reactor_->add(lane_loop_.get(), EPOLLOUT, &lane_endpoint_);
    watching_lane_ = true;
  }
}

bool DatagramPool::send_to_lane(void* ptr) {
  const ssize_t n = ::send(lane_loop_.get(), &ptr, kPointerBytes, MSG_DONTWAIT);
  loop_stats_->add(stats::Counter::handoff_sends);
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
    reactor_->remove(lane_loop_.get(), &lane_endpoint_);
    watching_lane_ = false;
  }
}

// [dgram.drain]
void DatagramPool::drain_completions() {
  for (;;) {
    Frame* frame = nullptr;
    const ssize_t n = ::recv(done_loop_.get(), &frame, kPointerBytes, MSG_DONTWAIT);
    loop_stats_->add(stats::Counter::handoff_recvs);
    if (n != static_cast<ssize_t>(kPointerBytes)) return;  // EAGAIN: the channel is empty
    sink_->on_frame(*frame);
    delete frame;
  }
}
// [dgram.drain]

// [dgram.thread]
void DatagramPool::thread_main(stats::ThreadStats& stats) {
  stats.attach_current_thread();
  for (;;) {
    Job* job = nullptr;
    const ssize_t n = ::recv(lane_pool_.get(), &job, kPointerBytes, 0);  // blocks: the park
    stats.add(stats::Counter::handoff_recvs);
    if (n != static_cast<ssize_t>(kPointerBytes)) {
      if (n < 0 && errno == EINTR) continue;
      break;
    }
    if (job == nullptr) break;  // the poison pill
    auto emit = [this, &stats](Frame* f) { this->emit(stats, f); };
    FrameResponder<decltype(emit)> responder(*job, emit);
    (*job->handler)(job->request, responder);
    stats.add(stats::Counter::requests);
    delete job;
  }
  stats.detach_current_thread();
  running_.fetch_sub(1, std::memory_order_release);  // pairs with the acquire in stop()
}

void DatagramPool::emit(stats::ThreadStats& stats, Frame* frame) {
  for (;;) {
    const ssize_t n = ::send(done_pool_.get(), &frame, kPointerBytes, 0);  // blocks if full
    stats.add(stats::Counter::handoff_sends);
    if (n == static_cast<ssize_t>(kPointerBytes)) return;
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "send(done)");
  }
}
// [dgram.thread]

void DatagramPool::stop() {
  if (stopped_ || threads_.empty()) {
    stopped_ = true;
    return;
  }
  stopped_ = true;
  for (std::size_t i = 0; i < threads_.size(); ++i) backlog_.push_back(nullptr);  // one pill each
  // Keep the lane fed and the completions drained until every thread has taken its pill:
  // a thread blocked sending a frame needs the loop to read, and the loop is us.
  while (running_.load(std::memory_order_acquire) > 0) {  // pairs with thread exit
    flush_backlog();
    drain_completions();
    pollfd fds[2] = {{done_loop_.get(), POLLIN, 0}, {lane_loop_.get(), POLLOUT, 0}};
    ::poll(fds, backlog_.empty() ? 1 : 2, 10);
  }
  drain_completions();
  for (auto& t : threads_) t.join();
  if (watching_lane_) {
    reactor_->remove(lane_loop_.get(), &lane_endpoint_);
    watching_lane_ = false;
  }
  reactor_->remove(done_loop_.get(), &done_endpoint_);
}

}  // namespace handoff::pool
