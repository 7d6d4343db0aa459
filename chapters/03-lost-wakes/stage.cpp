// chapters/03-lost-wakes/stage.cpp: the composition root of stage 03.
// Stage 02 with the ring pool's wake policy selectable: `--pool-wake elastic` (the default:
// one idle spinner, a wake only for an all-parked lane, the loop's age check, a wake
// channel per thread), `shared` (chapter 02's RingPool as it ships: one wake socket per lane,
// whose credit an awake thread can steal) or `chained` (the same pool with the chained wake
// that closes that hole), env HANDOFF_POOL_WAKE; `--pool-ring off` still selects chapter
// 01's datagram path.
#include "app/demo_routes.h"
#include "config/command_line.h"
#include "pool/ring_flags.h"
#include "server/server.h"

using namespace handoff;

// [stage03.main]
int main(int argc, char** argv) {
  config::CommandLine cli{
      "handoff stage 03: the elastic pool: wake only when every thread is parked, and the one that parked last"};
  server::ServerOptions options;
  server::add_core_flags(cli.app(), options);
  pool::RingChoice ring;
  pool::add_ring_flags(cli.app(), ring);
  pool::add_wake_flag(cli.app(), ring);
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
// [stage03.main]
