// chapters/01-baseline/stage.cpp: the composition root of stage 01, the "before".
// One epoll loop thread per worker; handlers run inline on it, or on a pool of blocking
// threads where every job and every frame crosses a datagram socketpair.
#include "app/demo_routes.h"
#include "config/command_line.h"
#include "pool/datagram_pool.h"
#include "server/server.h"

using namespace handoff;

// [stage01.main]
int main(int argc, char** argv) {
  config::CommandLine cli{"handoff stage 01: epoll loop + handler pool over datagram socketpairs"};
  server::ServerOptions options;
  server::add_core_flags(cli.app(), options);
  if (const auto exit = cli.parse(argc, argv)) return *exit;
  // Past the flags, a start that fails says one line and exits with its status (README.md).
  return server::exit_on_start_failure([&] {
    stats::Registry registry;
    app::Router router;
    app::add_demo_routes(router, registry);
    server::Server server(options, router, registry,
                          [](const pool::PoolConfig& config) { return std::make_unique<pool::DatagramPool>(config); });
    return server::run_until_signal(server, registry);
  });
}
// [stage01.main]
