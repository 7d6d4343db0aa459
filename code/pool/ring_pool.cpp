// pool/ring_pool: the loop↔pool hand-off in memory: Vyukov rings, spin-then-park, and
// a wake only for a thread that said it was parked (chapter 02).
#include "pool/ring_pool.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <tuple>

#include "net/socket_pair.h"

#include "stats/thread_cpu.h"

namespace handoff::pool {

namespace {

void send_word(int fd, std::uint64_t word, stats::ThreadStats& stats) {
  for (;;) {
    const ssize_t n = ::send(fd, &word, sizeof word, 0);
    stats.add(stats::Counter::handoff_sends);
    if (n == static_cast<ssize_t>(sizeof word)) return;
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "send(wake)");
  }
}
}  // namespace

RingPool::RingPool(const PoolConfig& config, RingPoolOptions options)
    : config_(config), options_(std::move(options)), jobs_(options_.ring_capacity), done_(options_.ring_capacity) {
  std::tie(lane_loop_, lane_pool_) = net::datagram_pair();
  std::tie(done_loop_, done_pool_) = net::datagram_pair();
}

RingPool::~RingPool() { stop(); }

void RingPool::bind(loop::Reactor& reactor, FrameSink& sink, stats::Registry& registry,
                    stats::ThreadStats& loop_stats) {
  reactor_ = &reactor;
  sink_ = &sink;
  loop_stats_ = &loop_stats;
  done_endpoint_.pool = this;
  reactor.add(done_loop_.get(), EPOLLIN, &done_endpoint_);
  for (int i = 0; i < config_.threads; ++i) {
    auto& st = registry.add("pool-" + std::to_string(config_.worker_index) + "-" + std::to_string(i), "pool");
    running_.fetch_add(1, std::memory_order_relaxed);  // read by stop() on this same thread
    threads_.emplace_back([this, &st] { thread_main(st); });
  }
}

// ---------------------------------------------------------------- the loop's side

// [ring.submit]
void RingPool::submit(Job* job) {
  ++in_flight_;
  if (!backlog_.empty() || !jobs_.try_push(job)) {
    backlog_.push_back(job);  // the ring is full: ready_to_wait() keeps the loop turning
    return;
  }
  // The push (a release store of the cell's sequence) must be visible before we read
  // parked_: a store then a load, which only a seq_cst fence orders. Pairs with the fence
  // in park() between announcing and re-checking.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  wake_one_if_parked(*loop_stats_);
}
// [ring.submit]

// [ring.wake]
void RingPool::wake_one_if_parked(stats::ThreadStats& stats) {
  // One wake per parked thread, never one per push: poke only while the parked threads
  // outnumber the pokes already on their way. relaxed loads: the fence before this call
  // orders them after the push; the CAS keeps two wakers from spending one credit twice.
  const int parked = parked_.load(std::memory_order_relaxed);
  int in_flight = wakes_in_flight_.load(std::memory_order_relaxed);
  while (parked > in_flight) {
    if (wakes_in_flight_.compare_exchange_weak(in_flight, in_flight + 1, std::memory_order_relaxed)) {
      stats.add(stats::Counter::wakes_sent);  // before the poke: whoever it wakes sees the count
      send_word(lane_loop_.get(), kPoke, stats);
      return;
    }
  }
}
// [ring.wake]

void RingPool::flush_backlog() {
  bool pushed = false;
  while (!backlog_.empty() && jobs_.try_push(backlog_.front())) {
    backlog_.pop_front();
    pushed = true;
  }
  if (pushed) {
    std::atomic_thread_fence(std::memory_order_seq_cst);  // as in submit(): push → read parked_
    wake_one_if_parked(*loop_stats_);
  }
}

// [ring.loop_wait]
bool RingPool::ready_to_wait() {
  flush_backlog();
  if (!backlog_.empty()) return false;  // a full ring: keep turning until it takes the rest
  // Optional: an answer is on its way, so spin for it rather than park and be poked.
  if (in_flight_ > 0 && sync::spin_until(options_.loop_spin, [this] { return !done_.empty(); })) return false;
  // Announce, then re-check: raise the flag, fence (the store must be visible before the
  // load of the ring; pairs with the fence in complete()), then look at the ring once more.
  loop_waiting_.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!done_.empty()) {
    loop_waiting_.store(false, std::memory_order_relaxed);
    return false;  // completions are waiting: poll without blocking, then drain them
  }
  return true;
}

void RingPool::after_wait() {
  // relaxed: a late poke only costs one spurious turn; the ring is drained either way.
  loop_waiting_.store(false, std::memory_order_relaxed);
  drain_completions();
}
// [ring.loop_wait]

void RingPool::drain_completions() {
  Frame* frame = nullptr;
  while (done_.try_pop(frame)) {
    if (frame->kind == Frame::Kind::whole || frame->kind == Frame::Kind::end || frame->kind == Frame::Kind::abort) {
      --in_flight_;
    }
    sink_->on_frame(*frame);
    delete frame;
  }
}

void RingPool::drain_loop_pokes() {
  // One recv: complete() pokes at most once per raised flag, so there is rarely a second
  // poke, and if there is, the level-triggered fd reports it again next turn. Reading until
  // EAGAIN would cost every wake a second, empty, syscall. after_wait() drains the ring.
  std::uint64_t word;
  ::recv(done_loop_.get(), &word, sizeof word, MSG_DONTWAIT);
  loop_stats_->add(stats::Counter::handoff_recvs);
}

// ---------------------------------------------------------------- a pool thread's side

// [ring.thread]
void RingPool::thread_main(stats::ThreadStats& stats) {
  stats.attach_current_thread();
  std::int64_t next_poll_ns = 0;
  bool pill = false;
  while (!pill) {
    // A thread that never runs dry must still see a pill: look at the lane socket,
    // without blocking, once per dgram_poll_ns, whatever the ring holds.
    const std::int64_t now = stats::monotonic_ns();
    if (now >= next_poll_ns) {
      next_poll_ns = now + options_.dgram_poll_ns;
      if (poll_lane(stats)) break;
    }
    Job* job = nullptr;
    if (jobs_.try_pop(job)) {
      run(stats, job);
      continue;
    }
    if (sync::spin_until(options_.spin, [&] { return jobs_.try_pop(job); })) {
      stats.add(stats::Counter::spin_catches);
      run(stats, job);
      continue;
    }
    job = park(stats, pill);
    if (job != nullptr) run(stats, job);
  }
  // A pill comes after every job submitted before stop(): finish what the ring still holds.
  Job* job = nullptr;
  while (jobs_.try_pop(job)) run(stats, job);
  stats.detach_current_thread();
  running_.fetch_sub(1, std::memory_order_release);  // pairs with the acquire in stop()
}

bool RingPool::poll_lane(stats::ThreadStats& stats) {
  std::uint64_t word;
  for (;;) {
    const ssize_t n = ::recv(lane_pool_.get(), &word, sizeof word, MSG_DONTWAIT);
    stats.add(stats::Counter::handoff_recvs);
    if (n != static_cast<ssize_t>(sizeof word)) return false;
    if (word == kPill) return true;
    // A poke, read by a thread that is already awake. It was sent for a parked thread;
    // taking it here spends that thread's credit (the hole chapter 03 closes).
    wakes_in_flight_.fetch_sub(1, std::memory_order_relaxed);
  }
}
// [ring.thread]

// [ring.park]
Job* RingPool::park(stats::ThreadStats& stats, bool& pill) {
  Job* job = nullptr;
  if (options_.park_order == RingPoolOptions::ParkOrder::announce_then_recheck) {
    parked_.fetch_add(1, std::memory_order_relaxed);
    // The announcement must be visible before we look at the ring again: a store then a
    // load. Pairs with the fence in submit() between its push and its read of parked_.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (options_.between_park_steps) options_.between_park_steps();
    if (jobs_.try_pop(job)) {
      parked_.fetch_sub(1, std::memory_order_relaxed);  // not parking after all
      return job;
    }
  } else {
    // The broken order, kept as the negative control: a push that lands between the
    // re-check and the announcement sees no parked thread and sends no wake.
    if (jobs_.try_pop(job)) return job;
    if (options_.between_park_steps) options_.between_park_steps();
    parked_.fetch_add(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  stats.add(stats::Counter::parks);
  std::uint64_t word = 0;
  ssize_t n;
  do {
    n = ::recv(lane_pool_.get(), &word, sizeof word, 0);  // the park
    stats.add(stats::Counter::handoff_recvs);
  } while (n < 0 && errno == EINTR);
  // Leave the parked count before giving back the credit, so that a waker never sees
  // more parked threads than there are and pokes for a thread that is awake.
  parked_.fetch_sub(1, std::memory_order_relaxed);
  if (word == kPoke) wakes_in_flight_.fetch_sub(1, std::memory_order_relaxed);
  pill = (word == kPill || n != static_cast<ssize_t>(sizeof word));
  return nullptr;
}
// [ring.park]

void RingPool::run(stats::ThreadStats& stats, Job* job) {
  auto emit = [this, &stats](Frame* f) { complete(stats, f); };
  FrameResponder<decltype(emit)> responder(*job, emit);
  (*job->handler)(job->request, responder);
  stats.add(stats::Counter::requests);
  delete job;
}

// [ring.complete]
void RingPool::complete(stats::ThreadStats& stats, Frame* frame) {
  while (!done_.try_push(frame)) std::this_thread::yield();  // the loop always drains
  // Push, then read the loop's flag: a store then a load. Pairs with the fence in
  // ready_to_wait() between raising the flag and re-checking this ring.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // exchange: of all the threads that see the flag raised, exactly one pokes.
  if (loop_waiting_.load(std::memory_order_relaxed) && loop_waiting_.exchange(false, std::memory_order_relaxed)) {
    stats.add(stats::Counter::completion_pokes);  // before the poke: the loop it wakes sees the count
    send_word(done_pool_.get(), kPoke, stats);
  }
}
// [ring.complete]

void RingPool::stop() {
  if (stopped_ || threads_.empty()) {
    stopped_ = true;
    return;
  }
  stopped_ = true;
  // Every job submitted so far goes into the ring before any pill goes into the lane.
  while (!backlog_.empty()) {
    flush_backlog();
    drain_completions();
    if (!backlog_.empty()) std::this_thread::yield();
  }
  for (std::size_t i = 0; i < threads_.size(); ++i) send_word(lane_loop_.get(), kPill, *loop_stats_);
  while (running_.load(std::memory_order_acquire) > 0) {  // pairs with thread exit
    drain_completions();
    pollfd p{done_loop_.get(), POLLIN, 0};
    ::poll(&p, 1, 1);
    if (p.revents & POLLIN) drain_loop_pokes();
  }
  for (auto& t : threads_) t.join();
  drain_completions();
  reactor_->remove(done_loop_.get(), &done_endpoint_);
}

}  // namespace handoff::pool
