// server/worker: one event-loop thread with its listener, connections and pool (chapter 01).
// Changed in chapters 04, 05, 06: the callback loop (04), an Onload stack of its own and the
// sockets handed in taken (05), a stop taken up (06).
#include "server/worker.h"

#include <sys/eventfd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "server/start_failure.h"
#include "stats/thread_cpu.h"

namespace handoff::server {

namespace {
constexpr std::int64_t kMsToNs = 1'000'000;
constexpr std::int64_t kAcceptBackoffNs = 100 * kMsToNs;
}  // namespace

Worker::Worker(const ServerOptions& options, int index, const app::Router& router, stats::Registry& registry,
               std::unique_ptr<pool::HandlerPool> pool, net::Listener listener)
    : options_(options),
      router_(router),
      loop_stats_(registry.add("loop-" + std::to_string(index), "loop")),
      registry_(registry),
      event_loop_(options.event_loop ? std::make_unique<evloop::EventLoop>(*options.event_loop) : nullptr),
      reactor_(event_loop_ ? event_loop_->reactor() : own_reactor_.emplace()),
      pool_(std::move(pool)),
      executor_(event_loop_ && pool_ ? std::make_unique<evloop::Executor>(*event_loop_, *pool_) : nullptr),
      coroutines_(event_loop_ ? std::make_unique<evloop::TaskSet>(*event_loop_) : nullptr),
      listener_(std::move(listener)),
      stop_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      clock_(stats::monotonic_ns),
      sweep_interval_ns_(std::clamp<std::int64_t>(
          std::min({options.header_timeout_ms, options.idle_timeout_ms, options.body_timeout_ms}) * kMsToNs / 4,
          5 * kMsToNs, 1000 * kMsToNs)),
      index_(index),
      inbox_(event_loop_.get(), loop_stats_, [this](net::Fd fd) { take_handed_in(std::move(fd)); }) {
  if (!stop_fd_) throw std::system_error(errno, std::generic_category(), "eventfd");
  if (router_.has_coroutine_routes() && !event_loop_) {
    throw std::invalid_argument("coroutine routes run on an event loop: set ServerOptions::event_loop");
  }
  if (options_.worker_services && !event_loop_) {
    throw std::invalid_argument("worker services live on an event loop: set ServerOptions::event_loop");
  }
  if (options_.worker_services) services_ = options_.worker_services(*event_loop_, loop_stats_);
  if (event_loop_) coroutine_context_.emplace(app::CoroutineContext{*event_loop_, executor_.get(), services_.get()});
  accept_cb_.worker = this;
  accept_cb_.fn = &Worker::on_accept;
  stop_cb_.worker = this;
  stop_cb_.fn = &Worker::on_stop_requested;
}

Worker::~Worker() = default;

void Worker::request_stop() noexcept {
  stop_asked_.store(true, std::memory_order_relaxed);  // relaxed: see take_up_stop()
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_fd_.get(), &one, sizeof one);
}

// [worker.run]
void Worker::run(const StartedFn& started) {
  try {
    start_loop();
  } catch (...) {
    if (!started) throw;
    started(std::current_exception());
    finish_loop();
    return;
  }
  if (started) started(nullptr);
  while (run_turn()) {
  }
  finish_loop();
}

bool Worker::run_turn(int max_wait_ms) {
  if (draining_ && connections_.empty() && coroutines_in_flight() == 0) return false;
  if (event_loop_) {
    const std::uint64_t ran = event_loop_->counts().callbacks_run;
    event_loop_->run_once(max_wait_ms);  // calls before_poll() and after_poll() around its poll
    loop_stats_.add(stats::Counter::loop_callbacks, event_loop_->counts().callbacks_run - ran);
    return true;
  }
  const int timeout = std::min(before_poll(), max_wait_ms);
  reactor_.poll(timeout);
  after_poll(timeout);
  return true;
}
// [worker.run]

// [worker.poll_hooks]
int Worker::before_poll() {
  int timeout = wait_timeout_ms();
  if (pool_ && !pool_->ready_to_wait()) timeout = 0;
  if (pool_) timeout = std::min(timeout, pool_->max_wait_ms());
  return timeout;
}

void Worker::before_nonblocking_poll() {
  if (pool_) pool_->before_nonblocking_poll();  // no loop spin on a turn that only looks
}

void Worker::after_poll(int timeout_ms) {
  loop_stats_.add(timeout_ms == 0 ? stats::Counter::loop_polls : stats::Counter::loop_waits);
  loop_stats_.add(stats::Counter::syscalls);  // the epoll_wait
  date_.refresh();
  if (pool_) pool_->after_wait();
  const std::int64_t now = clock_();
  if (now >= next_sweep_ns_) sweep(now);
  closed_.clear();
}
// [worker.poll_hooks]

void Worker::start_loop() {
  loop_stats_.attach_current_thread();
  // Chapter 05: under Onload, name a stack private to this thread before any socket is
  // made or moved here; adopt() then moves each socket into it. Without Onload the Server
  // has said so once (own-stack=no) and nothing is called.
  if (options_.stack == StackPlacement::per_worker) onload_ = net::OnloadExt::lookup();
  if (onload_.available()) {
    const std::string name = "w" + std::to_string(index_);
    const int rc = onload_.name_thread_stack(name.c_str());
    if (rc != 0) {  // asked for a stack per worker and cannot have one: a failed start
      const int err = rc == -1 ? errno : -rc;
      throw StartFailure(exit_status_for_errno(err), "cannot claim Onload stack " + name + " for worker " +
                                                         std::to_string(index_) +
                                                         ": onload_set_stackname: " + std::strerror(err));
    }
    own_stack_ = true;
    std::fprintf(stderr, "handoff: worker %d own-stack=yes (stack %s)\n", index_, name.c_str());
  }
  if (event_loop_) event_loop_->set_poll_hooks(this);
  next_sweep_ns_ = clock_() + sweep_interval_ns_;
  if (listener_.fd() >= 0) reactor_.add(listener_.fd(), EPOLLIN, &accept_cb_);
  reactor_.add(stop_fd_.get(), EPOLLIN, &stop_cb_);
  if (pool_) pool_->bind(reactor_, *this, registry_, loop_stats_);
}

void Worker::finish_loop() {
  // A coroutine still suspended (only when the turns ended before a drain finished) goes
  // now, while what it waits on exists. Every thread takes its pill. A drain that ran out of
  // time stops the pool at the same deadline: jobs not started are abandoned, threads still
  // inside a handler are let go (and executor calls on them end with an error).
  if (coroutines_) coroutines_->cancel_all();
  services_.reset();  // what the stage gave the coroutines (an upstream pool's idle connections)
  const std::int64_t deadline = draining_ ? drain_deadline_ns_ : pool::HandlerPool::kNoDeadline;
  if (executor_) {
    executor_->stop(deadline);
  } else if (pool_) {
    pool_->stop(deadline);
  }
  closed_.clear();
  // Chapter 05: sockets handed in that no turn will take are closed here, and any handed in
  // from now on are closed by hand_in() itself.
  inbox_.close();
  loop_stats_.detach_current_thread();
}

std::uint64_t Worker::adopt(net::Fd fd) {
  // [worker.adopt_move]
  // Onload moves a socket only before its first read or send: here, before the
  // Connection exists to read it.
  if (own_stack_) {
    loop_stats_.add(stats::Counter::syscalls);  // the move (an ioctl inside Onload)
    if (onload_.move_fd(fd.get()) == 0) loop_stats_.add(stats::Counter::stack_moves);
  }
  // [worker.adopt_move]
  loop_stats_.add(stats::Counter::conns_adopted);
  const std::uint64_t id = next_conn_id_++;
  // Room to retire every connection in one turn, so that close() never allocates: it runs
  // where an allocation has just failed (Connection::guarded).
  closed_.reserve(connections_.size() + 1);
  connections_.emplace(id, std::make_unique<Connection>(*this, std::move(fd), id, clock_()));
  loop_stats_.add(stats::Counter::syscalls);  // its epoll_ctl(ADD)
  return id;
}

int Worker::wait_timeout_ms() const {
  const std::int64_t until = next_sweep_ns_ - clock_();
  return static_cast<int>(std::clamp<std::int64_t>((until + kMsToNs - 1) / kMsToNs, 0, 1000));
}

void Worker::on_accept() {
  for (int i = 0; i < 64; ++i) {
    net::Fd fd;
    const net::Listener::Accept result = listener_.accept(fd);
    loop_stats_.add(stats::Counter::syscalls);  // the accept4
    switch (result) {
      case net::Listener::Accept::ok:
        loop_stats_.add(stats::Counter::accepts);
        try {
          acceptor_.deal(std::move(fd), *this);
        } catch (const std::bad_alloc&) {
          // Out of memory: this client is refused (its socket closes); those served go on.
        }
        break;
      case net::Listener::Accept::again:
        return;
      case net::Listener::Accept::out_of_fds:
        // Readiness stays set while the backlog holds connections we cannot accept:
        // stop listening for a while instead of spinning on it.
        reactor_.remove(listener_.fd(), &accept_cb_);
        accept_resume_ns_ = clock_() + kAcceptBackoffNs;
        next_sweep_ns_ = std::min(next_sweep_ns_, accept_resume_ns_);
        return;
      case net::Listener::Accept::error:
        return;
    }
  }
}

// Chapter 05: a socket the pool topology's acceptor handed in, taken on this loop.
void Worker::take_handed_in(net::Fd fd) {
  if (draining_) {  // stopping: take nothing new, as the closed listener takes nothing
    loop_stats_.add(stats::Counter::handins_closed);
    loop_stats_.add(stats::Counter::syscalls);  // the close, as fd goes out of scope
    return;
  }
  adopt(std::move(fd));
}

void Worker::close(Connection& conn) {
  if (conn.jobs_in_pool() > 0) --busy_connections_;  // its remaining frames will be dropped
  reactor_.remove(conn.fd(), &conn);
  loop_stats_.add(stats::Counter::syscalls, 2);  // epoll_ctl(DEL), and the close when it is destroyed
  const auto it = connections_.find(conn.id());
  if (it == connections_.end()) return;
  closed_.push_back(std::move(it->second));
  connections_.erase(it);
}

void Worker::on_stop_requested() {
  std::uint64_t n;
  [[maybe_unused]] auto r = ::read(stop_fd_.get(), &n, sizeof n);
  if (draining_) return;
  draining_ = true;
  const std::int64_t now = clock_();  // not the time before this turn's wait: see now_ns()
  drain_deadline_ns_ = now + options_.drain_timeout_ms * kMsToNs;
  next_sweep_ns_ = std::min(next_sweep_ns_, now + 10 * kMsToNs);
  if (accept_resume_ns_ == 0 && listener_.fd() >= 0) reactor_.remove(listener_.fd(), &accept_cb_);
  accept_resume_ns_ = 0;  // accepting ends for good: no resume time may keep the loop polling
  listener_.close();
  std::vector<Connection*> all;
  all.reserve(connections_.size());
  for (auto& [id, conn] : connections_) all.push_back(conn.get());
  for (Connection* conn : all) conn->begin_drain();
}

void Worker::sweep(std::int64_t now) {
  next_sweep_ns_ = now + (draining_ ? 10 * kMsToNs : sweep_interval_ns_);
  if (accept_resume_ns_ != 0 && now >= accept_resume_ns_) {
    accept_resume_ns_ = 0;
    reactor_.add(listener_.fd(), EPOLLIN, &accept_cb_);
  } else if (accept_resume_ns_ != 0) {
    next_sweep_ns_ = std::min(next_sweep_ns_, accept_resume_ns_);
  }
  std::vector<Connection*> all;
  all.reserve(connections_.size());
  for (auto& [id, conn] : connections_) all.push_back(conn.get());
  const bool force = draining_ && now >= drain_deadline_ns_;
  if (force && coroutines_) coroutines_->cancel_all();  // the drain deadline: coroutines too
  for (Connection* conn : all) {
    if (force) {
      conn->close_now();  // the drain deadline: close what is left, answered or not
    } else {
      conn->guarded([&] { conn->sweep(now); });
    }
  }
}

}  // namespace handoff::server
