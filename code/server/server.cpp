// server/server: the whole server: N workers, their threads, and graceful shutdown
// (chapter 01).
#include "server/server.h"

#include <signal.h>

#include <cstdio>

namespace handoff::server {

Server::Server(ServerOptions options, const app::Router& router, stats::Registry& registry, pool::PoolFactory make_pool)
    : options_(std::move(options)) {
  for (int i = 0; i < options_.workers; ++i) {
    // The first listener picks the port (port 0 → a free one); the rest share it.
    auto listener = net::Listener::open(options_.host, i == 0 ? options_.port : port_, options_.workers > 1);
    if (i == 0) port_ = listener.port();
    std::unique_ptr<pool::HandlerPool> pool;
    if (options_.dispatch == Dispatch::pool) pool = make_pool(pool::PoolConfig{i, options_.blocking_threads});
    workers_.push_back(std::make_unique<Worker>(options_, i, router, registry, std::move(pool), std::move(listener)));
  }
}

Server::~Server() {
  stop();
  wait();
}

void Server::start() {
  for (auto& w : workers_) threads_.emplace_back([worker = w.get()] { worker->run(); });
}

void Server::stop() noexcept {
  for (auto& w : workers_) w->request_stop();
}

void Server::wait() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

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
  server.wait();
  if (server.options().print_stats) {
    std::fputs(registry.summary().c_str(), stderr);
  }
  return 0;
}

}  // namespace handoff::server
