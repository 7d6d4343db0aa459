// chapters/05-stack-lock/stage.cpp: the composition root of stage 05.
// Stage 04 with chapter 05's two switches: `--topology shard|pool` (env HANDOFF_TOPOLOGY):
// a SO_REUSEPORT listener per worker, as before, or one acceptor that deals each accepted
// socket to worker i++ % W through that worker's thread-safe post (seed 004's pool shape);
// and `--stack shared|per-worker` (env HANDOFF_STACK): under Onload, a thread-scope stack per
// worker with every adopted socket moved into it before its first read (seed 004's fix);
// without Onload it says `own-stack=no` once. Every answer is sent through a model of the
// stack (code/stack/): one for all workers with --topology pool --stack shared, else one per
// worker; its lock's switches are --stack-buzz-us and --stack-handoff-us.
#include "app/demo_routes.h"
#include "config/command_line.h"
#if HANDOFF_HAVE_LIBPQ
#include "app/db_route.h"
#endif
#include "evloop/loop_flags.h"
#include "pool/ring_flags.h"
#include "server/server.h"

using namespace handoff;

// [stage05.main]
int main(int argc, char** argv) {
  config::CommandLine cli{
      "handoff stage 05: --topology shard|pool, --stack shared|per-worker and the stack lock's switches"};
  server::ServerOptions options;
  server::add_core_flags(cli.app(), options);
  server::add_topology_flags(cli.app(), options);
  server::add_stack_model_flags(cli.app(), options);  // every answer goes through a stack model
  pool::RingChoice ring;
  pool::add_ring_flags(cli.app(), ring);
  pool::add_wake_flag(cli.app(), ring);
  evloop::EventLoopOptions loop;
  evloop::add_loop_flags(cli.app(), loop);
#if HANDOFF_HAVE_LIBPQ  // built without libpq (Debian libpq-dev), stage 05 has no upstream
  app::DbOptions db;
  app::add_db_flags(cli.app(), db);
#endif
  if (const auto exit = cli.parse(argc, argv)) return *exit;
  // Past the flags, a start that fails says one line and exits with its status (README.md).
  return server::exit_on_start_failure([&] {
    evloop::apply_loop_env(loop);
    server::apply_topology_env(options);
    options.event_loop = loop;

    stats::Registry registry;
    app::Router router;
    app::add_demo_routes(router, registry);
    app::add_async_demo_routes(router);
#if HANDOFF_HAVE_LIBPQ
    if (!db.conninfo.empty()) {
      app::check_upstream_at_start(db, registry);  // unreachable: one warning line, and /stats says so
      options.worker_services = app::db_services(db);
      app::add_db_route(router);
    }
#endif
    server::Server server(options, router, registry, pool::ring_pool_factory(ring));
    return server::run_until_signal(server, registry);
  });
}
// [stage05.main]
