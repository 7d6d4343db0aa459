// config/env_switch: an environment variable that overrides a command-line switch
// (chapter 02).
#include "config/env_switch.h"

#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace handoff::config {

bool env_override(const char* env, bool flag_value) {
  const char* v = std::getenv(env);
  if (v == nullptr || *v == '\0') return flag_value;
  const std::string s(v);
  if (s == "0" || s == "off" || s == "false") return false;
  if (s == "1" || s == "on" || s == "true") return true;
  throw CLI::ValidationError(env, "expected 0/1/on/off/true/false, got '" + s + "'");
}

}  // namespace handoff::config
