// config/env_switch: an environment variable that overrides a command-line switch
// (chapter 02).
#include "config/env_switch.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace handoff::config {

const char* env_value(const char* env) noexcept {
  const char* v = std::getenv(env);
  return v == nullptr || *v == '\0' ? nullptr : v;
}

void refuse_env(const char* env, const std::string& expected, const std::string& got) {
  throw CLI::ValidationError(env, "expected " + expected + ", got '" + got + "'");
}

bool env_override(const char* env, bool flag_value) {
  const char* v = env_value(env);
  if (v == nullptr) return flag_value;
  const std::string s(v);
  if (s == "0" || s == "off" || s == "false") return false;
  if (s == "1" || s == "on" || s == "true") return true;
  refuse_env(env, "0/1/on/off/true/false", s);
}

double env_override(const char* env, double flag_value) {
  const char* v = env_value(env);
  return v == nullptr ? flag_value : std::strtod(v, nullptr);
}

std::string env_override(const char* env, const char* flag, const std::vector<std::string>& values,
                         const std::string& flag_value) {
  const char* v = env_value(env);
  if (v == nullptr) return flag_value;
  if (std::find(values.begin(), values.end(), v) == values.end())
    refuse_env(env, std::string("a ") + flag + " value", v);
  return v;
}

}  // namespace handoff::config
