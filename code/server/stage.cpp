// server/stage: what every stage's main does, and the parts a chapter adds to it (chapter 01).
// Changed in chapters 02, 03, 04, 05, 06: the start of the part each composes.
#include "server/stage.h"

#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "app/demo_routes.h"
#include "config/command_line.h"
#include "evloop/loop_flags.h"
#include "pool/datagram_pool.h"
#include "pool/ring_flags.h"
#include "stats/thread_stats.h"
#include "server/server.h"

#include <nlohmann/json.hpp>
#if HANDOFF_HAVE_LIBPQ
#include "app/db_route.h"
#include "upstream/conninfo_redact.h"
#endif

namespace handoff::server {

// The flags are bound to these members, so a Stage stays where it was built.
struct Stage::Parts {
  explicit Parts(const std::string& summary) : cli(summary) {}
  config::CommandLine cli;
  ServerOptions options;
  bool ring_handoff = false;  // chapter 02's ring pools, else chapter 01's DatagramPool
  pool::RingChoice ring;
  bool event_loop = false;  // chapter 04
  evloop::EventLoopOptions loop;
  bool topology = false;  // chapter 05
  bool config_files = false;  // chapter 06
  bool metrics = false;       // chapter 06
  std::vector<std::function<void(app::Router&)>> routes;  // the reader's own (routes())
#if HANDOFF_HAVE_LIBPQ
  bool upstream = false;  // chapter 04
  app::DbOptions db;
#endif
};

Stage::Stage(const std::string& summary) : parts_(std::make_unique<Parts>(summary)) {
  add_core_flags(parts_->cli.app(), parts_->options);
  parts_->cli.settings_from_environment("HANDOFF_");
}

Stage::~Stage() = default;

void Stage::ring_handoff() {
  parts_->ring_handoff = true;
  pool::add_ring_flags(parts_->cli.app(), parts_->ring);
}

void Stage::wake_policy() {
  if (!parts_->ring_handoff) throw std::logic_error("Stage::wake_policy() needs ring_handoff() first");
  pool::add_wake_flag(parts_->cli.app(), parts_->ring);
}

void Stage::event_loop() {
  parts_->event_loop = true;
  evloop::add_loop_flags(parts_->cli.app(), parts_->loop);
}

void Stage::upstream() {
  if (!parts_->event_loop) throw std::logic_error("Stage::upstream() needs event_loop() first");
#if HANDOFF_HAVE_LIBPQ
  parts_->upstream = true;
  app::add_db_flags(parts_->cli.app(), parts_->db);
  parts_->cli.redact("--pg", upstream::redact_conninfo);
#endif
}

void Stage::topology() {
  parts_->topology = true;
  add_topology_flags(parts_->cli.app(), parts_->options);
}

void Stage::stack_model() { add_stack_model_flags(parts_->cli.app(), parts_->options); }

void Stage::full_system_defaults() {
  if (!parts_->topology) throw std::logic_error("Stage::full_system_defaults() needs topology() first");
  parts_->cli.default_to("--dispatch", "pool");
  parts_->cli.default_to("--stack", "per-worker");
}

void Stage::config_files(const std::string& profile_dir) {
  parts_->config_files = true;
  parts_->cli.add_config_files(profile_dir);
}

void Stage::metrics() { parts_->metrics = true; }

namespace {

// /stats' "settings" section, and the line run_until_signal prints once the server has
// started: the profile, and what a flag or a file set.
std::string announce_settings(const config::CommandLine& cli, stats::Registry& registry) {
  nlohmann::json given = nlohmann::json::object();
  std::string line = "handoff: profile " + (cli.profile().empty() ? std::string("none") : cli.profile()) + "; set:";
  for (const auto& [flag, value] : cli.given_settings()) {
    given[flag.substr(2)] = value;
    line += " " + flag + "=" + value;
  }
  if (given.empty()) line += " nothing (every default; --print-config lists them)";
  registry.set_section("settings", {{"profile", cli.profile()}, {"given", given}});
  return line;
}

}  // namespace

void Stage::routes(std::function<void(app::Router&)> add) { parts_->routes.push_back(std::move(add)); }

// [stage.run]
int Stage::run(int argc, char** argv) {
  Parts& p = *parts_;
  if (const auto exit = p.cli.parse(argc, argv)) return *exit;
  // Past the flags, a start that fails says one line and exits with its status (README.md).
  return exit_on_start_failure([&] {
    if (p.event_loop) p.options.event_loop = p.loop;

    stats::Registry registry;
    app::Router router;
    app::add_demo_routes(router, registry);
    for (const auto& add : p.routes) add(router);
    if (p.metrics) app::add_metrics_route(router, registry);
    if (p.event_loop) {
      app::add_async_demo_routes(router);
    }
#if HANDOFF_HAVE_LIBPQ
    if (p.upstream && !p.db.conninfo.empty()) {
      app::check_upstream_at_start(p.db, registry);  // unreachable: one warning line, and /stats says so
      p.options.worker_services = app::db_services(p.db);
      app::add_db_route(router);
    }
#endif
    pool::PoolFactory make_pool = [](const pool::PoolConfig& config) {
      return std::make_unique<pool::DatagramPool>(config);
    };
    if (p.ring_handoff) {
      make_pool = pool::ring_pool_factory(p.ring);
    }
    Server server(p.options, router, registry, std::move(make_pool));
    return run_until_signal(server, registry, p.config_files ? announce_settings(p.cli, registry) : "");
  });
}
// [stage.run]

}  // namespace handoff::server
