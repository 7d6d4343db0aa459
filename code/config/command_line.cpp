// config/command_line: the command line a stage binary parses (chapter 01).
#include "config/command_line.h"

#include <CLI/CLI.hpp>

namespace handoff::config {

CommandLine::CommandLine(const std::string& description) : app_(std::make_unique<CLI::App>(description)) {}

CommandLine::~CommandLine() = default;

std::optional<int> CommandLine::parse(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_->exit(e);
  }
  return std::nullopt;
}

}  // namespace handoff::config
