// server/stage: what every stage's main does, and the parts a chapter adds to it (chapter 01;
// one home since issue 26, so that two stage roots differ by what they compose and nothing
// else).
// Changed in chapters 02, 03, 04, 05, 06: the part each chapter composes, one method each.
// Role: a stage root names its --help line and calls one method per part it composes; run()
// parses the flags and starts the server inside exit_on_start_failure. Every stage has the
// core flags (server/options), the demo routes and chapter 01's DatagramPool as its pool;
// each part below is the chapter's flags and what the start does with them:
//
//     int main(int argc, char** argv) {
//       handoff::server::Stage stage{"handoff stage 03: ..."};
//       stage.ring_handoff();  // chapter 02
//       stage.wake_policy();   // chapter 03
//       return stage.run(argc, argv);
//     }
//
// The flags are added when the part is called (so --help lists them in that order); what
// each part does at start runs in one fixed order, whatever the order of the calls.
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace handoff::app {
class Router;
}  // namespace handoff::app

namespace handoff::server {

/// One stage binary's main, composed part by part. Build it, call the parts, run() once.
/// Neither copied nor moved: the flags are bound to its members.
class Stage {
 public:
  /// `summary`: the stage's one line under --help ("handoff stage NN: what it adds").
  explicit Stage(const std::string& summary);
  ~Stage();
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;

  /// Chapter 02: the loop↔pool hand-off in rings: --pool-ring on|off (off: chapter 01's
  /// datagram path, in the same binary) and the spin knobs (pool/ring_flags).
  void ring_handoff();
  /// Chapter 03: the ring pool's wake policy, --pool-wake (env HANDOFF_POOL_WAKE): `elastic`
  /// (the default: one idle spinner, a wake only for an all-parked lane, the loop's age
  /// check, a wake channel per thread), `shared` (chapter 02's RingPool as it ships: one wake
  /// socket per lane, whose credit an awake thread can steal) or `chained` (the same pool
  /// with the chained wake that closes that hole). Needs ring_handoff(), whose pools it
  /// chooses between; without it a stage keeps `shared`.
  void wake_policy();
  /// Chapter 04: each worker's loop is a callback event loop (--turn, --hand-in, --timer-clock,
  /// --loop-wake-spin-us; env HANDOFF_TURN), with the coroutine demo routes /async/work and
  /// /async/sleep on it.
  void event_loop();
  /// Chapter 04: given --pg (env HANDOFF_PG), a PostgreSQL pool per worker and GET /db;
  /// checked once at start. Built without libpq (Debian libpq-dev), a stage has no upstream
  /// and this adds nothing. Needs event_loop().
  void upstream();
  /// Chapter 05: --topology shard|pool (env HANDOFF_TOPOLOGY): a SO_REUSEPORT listener per
  /// worker, as before, or one acceptor that deals each accepted socket to worker i++ % W
  /// through that worker's thread-safe post (seed 004's pool shape); and --stack
  /// shared|per-worker (env HANDOFF_STACK): under Onload, a thread-scope stack per worker,
  /// every adopted socket moved into it before its first read (seed 004's fix); without
  /// Onload it says `own-stack=no` once. The pool topology needs event_loop().
  void topology();
  /// Chapter 05: every answer sent through a model of the user-level stack (code/stack/):
  /// one for all workers with --topology pool --stack shared, else one per worker; its
  /// lock's switches are --stack-buzz-us and --stack-handoff-us.
  void stack_model();

  /// Chapter 06: the defaults of the full system where they differ from the parts' own:
  /// --dispatch pool (a route that may block runs on the pool, chapters 01–03; a route that
  /// never blocks still runs on the loop) and --stack per-worker (chapter 05's fix). The
  /// parts' other defaults are already their chapter's winner (the ring, the elastic wake,
  /// one generation a turn, no wake spin, the direct hand-in, the shard topology). Call it
  /// after the parts whose flags it changes.
  void full_system_defaults();
  /// Chapter 06: settings from files, as a deployed server takes them: --config FILE,
  /// --print-config and --like NAME, a profile file in `profile_dir` (config/command_line).
  /// The start-up line and /stats ("settings") say which profile and which settings a flag
  /// or a file set.
  void config_files(const std::string& profile_dir);
  /// Chapter 06: GET /metrics, the /stats figures in Prometheus's text format
  /// (stats/prometheus).
  void metrics();

  /// Routes of the reader's own, beside the demo routes: `add` is given the stage's router
  /// once, before the server starts (exercises/01-add-route serves its route this way).
  void routes(std::function<void(app::Router&)> add);

  /// Parse the flags, then start the server and serve until SIGINT/SIGTERM; the status to
  /// return from main: CLI11's after --help or a refused flag, else exit_on_start_failure's.
  int run(int argc, char** argv);

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace handoff::server
