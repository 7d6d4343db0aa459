// config/env_switch: an environment variable that overrides a command-line switch
// (chapter 02).
// Role: the seeds kept each old path behind an environment switch (M0_POOL_RING=0, ...);
// every stage keeps the same habit, so both arms of a measurement run from one binary.
// It sits below pool/ and server/, which both read switches.
#pragma once

namespace handoff::config {

/// Read a boolean switch: the environment variable `env` (if set: 0/off/false or 1/on/true)
/// overrides `flag_value`. Throws CLI::ValidationError on another value.
bool env_override(const char* env, bool flag_value);

}  // namespace handoff::config
