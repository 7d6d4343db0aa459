// chapters/06-full-system/tests/settings_files.h: what stage 06's settings tests share
// (chapter 06).
// Role: a settings file written for one test and removed after it, and `--print-config` read
// back as key → value, so that settings_test and settings_sources_test ask the binary the same
// way.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "testkit/stage_process.h"

namespace handoff::settings_tests {

/// A file under the temporary directory holding `text` byte for byte, removed with the object.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text)
      : path((std::filesystem::temp_directory_path() /
              ("handoff-settings-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".toml"))
                 .string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  static inline int counter = 0;
};

/// `--print-config` with `args` (and `env`, "NAME=VALUE" each), as key → value (TOML's
/// `key=value` lines; comments dropped).
inline std::map<std::string, std::string> printed(std::vector<std::string> args,
                                                  const std::vector<std::string>& env = {}) {
  using namespace std::chrono_literals;
  args.push_back("--print-config");
  std::vector<std::string> wrapper;
  if (!env.empty()) {
    wrapper.push_back("/usr/bin/env");
    wrapper.insert(wrapper.end(), env.begin(), env.end());
  }
  const auto run = testkit::run_to_exit(testkit::stage_binary(), args, 10s, wrapper);
  INFO(run.err);
  REQUIRE(run.status == 0);
  std::map<std::string, std::string> out;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    REQUIRE(eq != std::string::npos);
    out[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return out;
}

}  // namespace handoff::settings_tests
