// evloop/loop_flags: the command-line switches of the worker's callback loop (chapter 04).
#include "evloop/loop_flags.h"

#include <CLI/CLI.hpp>

#include <map>
#include <string>

#include "config/choice.h"
#include "config/bounds.h"

namespace handoff::evloop {

namespace {
const std::map<std::string, TurnShape> kTurns{{"generation", TurnShape::generation}, {"drain", TurnShape::drain}};
const std::map<std::string, HandIn> kHandIns{{"direct", HandIn::direct}, {"coordinator", HandIn::coordinator}};
const std::map<std::string, TimerClock> kTimerClocks{{"turn", TimerClock::per_turn}, {"call", TimerClock::per_call}};
}  // namespace

void add_loop_flags(CLI::App& app, EventLoopOptions& o) {
  config::add_choice(app, "--turn", o.turn, kTurns,
                 "what one loop turn runs: generation (the callbacks ready when it began, then a poll) or drain "
                 "(callbacks to quiescence in batches of 64, at most 1024, then a poll: seed 003's before)");
  config::add_choice(app, "--hand-in", o.hand_in, kHandIns,
                 "how call_soon_threadsafe reaches the loop: direct (into its queue, one wake) or coordinator "
                 "(through a coordinator thread, two wakes: seed 003's before)");
  config::add_choice(app, "--timer-clock", o.timer_clock, kTimerClocks,
                     "what call_later measures from: turn (the loop's time, one clock read per turn, as libuv's "
                     "uv_now) or call (a clock read per call_later, as asyncio's loop.time())");
  app.add_option_function<double>(
         "--loop-wake-spin-us",
         [&o](double us) {
           o.wake_spin.spin_ns = static_cast<std::int64_t>(us * 1000.0);
           o.wake_spin.yield_after_ns = o.wake_spin.spin_ns;  // a loop never yields its core
         },
         "before a wait, the loop polls for a thread-safe post this long (0: off; seed 003's spin was 50)")
      ->check(config::number_in(0, 100'000))
      ->default_str("0");
}

}  // namespace handoff::evloop
