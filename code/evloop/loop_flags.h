// evloop/loop_flags: the command-line switches of the worker's callback loop (chapter 04).
// Role: give stage 04 on the `--turn generation|drain` switch (environment override
// HANDOFF_TURN) and `--hand-in direct|coordinator`, so both arms of each run from one
// binary in one session.
#pragma once


#include "evloop/event_loop.h"

namespace CLI {
class App;  // CLI11's parser; the flags' .cpp includes CLI11 itself
}

namespace handoff::evloop {

/// Add --turn generation|drain (default generation), --hand-in direct|coordinator
/// (default direct), --timer-clock turn|call (default turn) and --loop-wake-spin-us
/// (default 0), writing into `options`.
void add_loop_flags(CLI::App& app, EventLoopOptions& options);

}  // namespace handoff::evloop
