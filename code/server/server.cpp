// server/server: the whole server: N workers, their threads, and graceful shutdown
// (chapter 01).
// Changed in chapters 05, 06: the pool topology's acceptor and the stacks (05), the started line (06).
#include "server/server.h"

#include <nlohmann/json.hpp>

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

#include "net/onload_ext.h"
#include "server/start_failure.h"
#include "stats/thread_stats.h"

namespace handoff::server {

namespace {
/// --host and --port as the address to bind, or the start's one line.
net::ListenAddress resolve_listen_address(const std::string& host, std::uint16_t port) {
  try {
    return net::ListenAddress::resolve(host, port);
  } catch (const net::AddressError& e) {
    if (e.kind() == net::AddressError::Kind::unknown_host) {
      throw StartFailure(ExitStatus::no_host, "cannot resolve host '" + host + "': " + e.reason());
    }
    throw StartFailure(ExitStatus::usage, "bad host '" + host + "': " + e.reason());
  }
}

/// A listener on `address`, or the start's one line: `cannot listen on 127.0.0.1:8080:
/// Address already in use` (the step named when it is not the bind).
net::Listener open_listener(const net::ListenAddress& address, bool reuse_port) {
  try {
    return net::Listener::open(address, reuse_port);
  } catch (const std::system_error& e) {
    const std::string step = e.what();
    const std::string reason = e.code().message();
    const bool bind = step.rfind("bind", 0) == 0;
    throw StartFailure(
        exit_status_for_errno(e.code().value()),
        "cannot listen on " + address.text() + ": " + (bind ? "" : step.substr(0, step.find(':')) + ": ") + reason);
  }
}
}  // namespace

// [server.topology]
Server::Server(ServerOptions options, const app::Router& router, stats::Registry& registry, pool::PoolFactory make_pool)
    : options_(std::move(options)) {
  const bool pool_topology = options_.topology == Topology::pool;
  if (pool_topology && !options_.event_loop) {
    throw std::invalid_argument(
        "the pool topology hands sockets through each worker's event loop: set "
        "ServerOptions::event_loop");
  }
  address_ = resolve_listen_address(options_.host, options_.port);
  for (int i = 0; i < options_.workers; ++i) {
    // shard: a listener per worker; the first picks the port (port 0 → a free one), the rest
    // share it. pool: one listener, the first worker's; the others are fed by hand_in().
    net::Listener listener;
    if (i == 0 || !pool_topology) listener = open_listener(address_, options_.workers > 1 && !pool_topology);
    if (i == 0) {
      address_.set_port(port_ = listener.port());
      dual_stack_ = listener.dual_stack();
    }
    std::unique_ptr<pool::HandlerPool> pool;
    if (options_.dispatch == Dispatch::pool) pool = make_pool(pool::PoolConfig{i, options_.blocking_threads});
    workers_.push_back(std::make_unique<Worker>(options_, i, router, registry, std::move(pool), std::move(listener)));
  }
  // [server.topology]
  // [server.topology_stack]
  // Once, here, the workers say nothing; after every listener opened, so a start that fails
  // is still the one line that says why.
  if (options_.stack == StackPlacement::per_worker && !net::OnloadExt::lookup().available()) {
    std::fputs("handoff: own-stack=no (Onload not loaded)\n", stderr);
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
// [server.topology_stack]

Server::~Server() {
  stop();
  wait();
}

void Server::start() {
  for (auto& w : workers_) {
    threads_.emplace_back([this, worker = w.get()] {
      worker->run([this](const std::exception_ptr& failed) {
        std::lock_guard lock(mu_);
        ++started_;
        if (failed && !start_failure_) start_failure_ = failed;
        changed_cv_.notify_all();
      });
      {
        std::lock_guard lock(mu_);
        ++finished_;
      }
      changed_cv_.notify_all();
    });
  }
  std::unique_lock lock(mu_);
  const bool all = changed_cv_.wait_for(lock, kStartWithin, [&] { return started_ == threads_.size(); });
  std::exception_ptr failed = start_failure_;
  lock.unlock();
  if (!all) {
    // A loop stuck before its first turn cannot be joined within any bound: leave it.
    std::fprintf(stderr, "handoff: cannot start: a worker did not start its loop within %lld ms\n",
                 static_cast<long long>(kStartWithin.count()));
    std::fflush(stderr);
    std::_Exit(static_cast<int>(ExitStatus::internal));
  }
  if (failed) {
    stop();  // the workers that did start have no connections yet: they return at once
    wait();
    std::rethrow_exception(failed);
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
  changed_cv_.wait_for(lock, limit, [&] { return finished_ == all; });
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

int run_until_signal(Server& server, const stats::Registry& registry, const std::string& started) {
  // Block the signals before any thread starts, so every thread inherits the mask and
  // only sigwait below ever sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  server.start();  // throws StartFailure if a worker could not start its loop
  if (server.address().is_ipv6_any()) {
    std::fputs(server.dual_stack() ? "handoff: [::] is dual-stack (IPV6_V6ONLY off): IPv4 clients are served too\n"
                                   : "handoff: [::] is IPv6 only: the kernel refused IPV6_V6ONLY off\n",
               stderr);
  }
  if (!started.empty()) std::fprintf(stderr, "%s\n", started.c_str());
  std::printf("handoff: listening on http://%s\n", server.address().text().c_str());
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
