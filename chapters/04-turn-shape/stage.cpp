// chapters/04-turn-shape/stage.cpp: the composition root of stage 04.
// Stage 03 with each worker's loop grown into a callback event loop (code/evloop): the
// connections, the listener and the pool's completions are served as before, inside the
// loop's poll, and callbacks, timers and thread-safe posts run on the same thread, one turn
// shape or the other (`--turn generation|drain`, env HANDOFF_TURN). Handlers may be
// coroutines on that loop (/async/work, /async/sleep), and, given an upstream (`--pg`), each
// worker has its own connection pool to PostgreSQL on its loop, which GET /db queries.
#include "app/demo_routes.h"
#include "config/command_line.h"
#if HANDOFF_HAVE_LIBPQ
#include "app/db_route.h"
#endif
#include "evloop/loop_flags.h"
#include "pool/ring_flags.h"
#include "server/server.h"

using namespace handoff;

// [stage04.main]
int main(int argc, char** argv) {
  config::CommandLine cli{"handoff stage 04: the worker's loop is a callback event loop; --turn picks a turn's shape"};
  server::ServerOptions options;
  server::add_core_flags(cli.app(), options);
  pool::RingChoice ring;
  pool::add_ring_flags(cli.app(), ring);
  pool::add_wake_flag(cli.app(), ring);
  evloop::EventLoopOptions loop;
  evloop::add_loop_flags(cli.app(), loop);
#if HANDOFF_HAVE_LIBPQ  // built without libpq (Debian libpq-dev), stage 04 has no upstream
  app::DbOptions db;
  app::add_db_flags(cli.app(), db);
#endif
  if (const auto exit = cli.parse(argc, argv)) return *exit;
  // Past the flags, a start that fails says one line and exits with its status (README.md).
  return server::exit_on_start_failure([&] {
    evloop::apply_loop_env(loop);
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
// [stage04.main]
