// chapters/02-ring-handoff/stage.cpp: the composition root of stage 02.
// Stage 01 with the loop↔pool hand-off moved into rings; `--pool-ring off` (or
// HANDOFF_POOL_RING=0) keeps stage 01's datagram path in the same binary.
#include "app/demo_routes.h"
#include "config/command_line.h"
#include "pool/ring_flags.h"
#include "server/server.h"

using namespace handoff;

// [stage02.main]
int main(int argc, char** argv) {
  config::CommandLine cli{"handoff stage 02: the hand-off in Vyukov rings, spin-then-park, wake only a parked thread"};
  server::ServerOptions options;
  server::add_core_flags(cli.app(), options);
  pool::RingChoice ring;
  pool::add_ring_flags(cli.app(), ring);
  if (const auto exit = cli.parse(argc, argv)) return *exit;
  // Past the flags, a start that fails says one line and exits with its status (README.md).
  return server::exit_on_start_failure([&] {
    stats::Registry registry;
    app::Router router;
    app::add_demo_routes(router, registry);
    server::Server server(options, router, registry, pool::ring_pool_factory(ring));
    return server::run_until_signal(server, registry);
  });
}
// [stage02.main]
