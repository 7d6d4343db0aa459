// config/env_switch: an environment variable that overrides a command-line switch
// (chapter 02; the one reading of an override since issue 26).
// Role: the seeds kept each old path behind an environment switch (M0_POOL_RING=0, ...);
// every stage keeps the same habit, so both arms of a measurement run from one binary. One
// reading for every override: unset or empty leaves the flag's value; a value the flag would
// refuse throws CLI::ValidationError ("ENV: expected ..., got 'VALUE'"), which a stage's
// start reports as one line and exit 64 (server/start_failure). It sits below pool/ and
// server/, which read their switches through it.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace handoff::config {

/// A boolean switch: `env` (0/off/false or 1/on/true) overrides `flag_value`.
bool env_override(const char* env, bool flag_value);

/// A number: `env` overrides `flag_value`, read as strtod(3) reads it (a value that is not a
/// number reads as 0, as it always has).
double env_override(const char* env, double flag_value);

/// A choice among `values` (the flag's own words, `flag` naming it: "--pool-wake").
std::string env_override(const char* env, const char* flag, const std::vector<std::string>& values,
                         const std::string& flag_value);

/// A choice among the keys of `values`, the flag's own map from its words to what they choose.
template <class T>
T env_override(const char* env, const char* flag, const std::map<std::string, T>& values, T flag_value);

/// `env`'s value when it is set and not empty, else nullptr.
const char* env_value(const char* env) noexcept;

/// Throw CLI::ValidationError for `env`: "expected `expected`, got 'GOT'".
[[noreturn]] void refuse_env(const char* env, const std::string& expected, const std::string& got);

template <class T>
T env_override(const char* env, const char* flag, const std::map<std::string, T>& values, T flag_value) {
  const char* v = env_value(env);
  if (v == nullptr) return flag_value;
  const auto it = values.find(v);
  if (it == values.end()) refuse_env(env, std::string("a ") + flag + " value", v);
  return it->second;
}

}  // namespace handoff::config
