// server/server: the whole server: N workers, their threads, and graceful shutdown
// (chapter 01).
#include "server/server.h"

#include <nlohmann/json.hpp>

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "net/onload_ext.h"
#include "stats/thread_stats.h"

namespace handoff::server {

// [server.topology]
Server::Server(ServerOptions options, const app::Router& router, stats::Registry& registry, pool::PoolFactory make_pool)
    : options_(std::move(options)) {
  const bool pool_topology = options_.topology == Topology::pool;
  if (pool_topology && !options_.event_loop) {
    throw std::invalid_argument(
        "the pool topology hands sockets through each worker's event loop: set "
        "ServerOptions::event_loop");
  }
  if (options_.stack == StackPlacement::per_worker && !net::OnloadExt::lookup().available()) {
    std::fputs("handoff: own-stack=no (Onload not loaded)\n", stderr);  // once, here; the workers say nothing
  }
  for (int i = 0; i < options_.workers; ++i) {
    // shard: a listener per worker; the first picks the port (port 0 → a free one), the rest
    // share it. pool: one listener, the first worker's; the others are fed by hand_in().
    net::Listener listener;
    if (i == 0 || !pool_topology) {
      listener =
          net::Listener::open(options_.host, i == 0 ? options_.port : port_, options_.workers > 1 && !pool_topology);
    }
    if (i == 0) port_ = listener.port();
    std::unique_ptr<pool::HandlerPool> pool;
    if (options_.dispatch == Dispatch::pool) pool = make_pool(pool::PoolConfig{i, options_.blocking_threads});
    workers_.push_back(std::make_unique<Worker>(options_, i, router, registry, std::move(pool), std::move(listener)));
  }
  if (options_.stack_model) {
    // One stack behind every worker only where seed 004 had one: the pool topology's
    // sockets, all accepted from one listener, left in its stack.
    const bool one_stack = pool_topology && options_.stack == StackPlacement::shared;
    for (auto& w : workers_) {
      if (stacks_.empty() || !one_stack)
        stacks_.push_back(std::make_unique<stack::NetworkStack>(*options_.stack_model));
      w->send_through(stacks_.back().get());
    }
  }
  if (pool_topology) {
    std::vector<Worker*> all;
    for (auto& w : workers_) all.push_back(w.get());
    workers_.front()->accept_for(std::move(all));  // worker i gets the accepted sockets n with n % W == i
  }
}
// [server.topology]

Server::~Server() {
  stop();
  wait();
}

void Server::start() {
  for (auto& w : workers_) {
    threads_.emplace_back([this, worker = w.get()] {
      worker->run();
      {
        std::lock_guard lock(mu_);
        ++finished_;
      }
      finished_cv_.notify_all();
    });
  }
}

void Server::stop() noexcept {
  for (auto& w : workers_) w->request_stop();
}

void Server::wait() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

int Server::wait_for(std::chrono::milliseconds limit) {
  std::unique_lock lock(mu_);
  const int all = static_cast<int>(threads_.size());
  finished_cv_.wait_for(lock, limit, [&] { return finished_ == all; });
  return all - finished_;
}

namespace {
/// Past the drain deadline, how long the loops get to close what is left and return.
constexpr std::chrono::milliseconds kExitGrace{250};

/// The jobs every pool dropped unrun (their connection closed, or the deadline passed).
unsigned long long jobs_abandoned(const stats::Registry& registry) {
  unsigned long long total = 0;
  const std::string name(stats::counter_name(stats::Counter::jobs_abandoned));
  for (const auto& thread : registry.to_json()["threads"]) total += thread["counters"].value(name, 0ULL);
  return total;
}
}  // namespace

int run_until_signal(Server& server, const stats::Registry& registry) {
  // Block the signals before any thread starts, so every thread inherits the mask and
  // only sigwait below ever sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  server.start();
  std::printf("handoff: listening on http://%s:%u\n", server.options().host.c_str(), server.port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&set, &sig);
  server.stop();
  const int busy = server.wait_for(std::chrono::milliseconds(server.options().drain_timeout_ms) + kExitGrace);
  if (server.options().print_stats) std::fputs(registry.summary().c_str(), stderr);
  if (busy > 0) {
    // A loop still inside a handler (inline), or a pool that waits for its threads, would
    // hold the process past the bound --drain-timeout-ms promises: leave them.
    std::fprintf(stderr, "handoff: drain deadline passed: %d loop thread(s) still busy, %llu job(s) abandoned\n", busy,
                 jobs_abandoned(registry));
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(0);
  }
  server.wait();
  if (server.options().print_stats) std::fprintf(stderr, "jobs abandoned: %llu\n", jobs_abandoned(registry));
  return 0;
}

}  // namespace handoff::server
