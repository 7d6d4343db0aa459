// config/command_line: the command line a stage binary parses (chapter 01; a home of its own
// since the build-budget work of chapter 05).
// Role: owns CLI11's parser behind a forward declaration, so that a stage's composition root
// does not compile CLI11 (a dozen CPU seconds a file: its formatter's and config reader's
// virtual functions are emitted wherever the header is included). The flag adders
// (server/options, pool/ring_flags, evloop/loop_flags, app/db_route) take `app()`.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace handoff::config {

class CommandLine {
 public:
  explicit CommandLine(const std::string& description);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  CLI::App& app() noexcept { return *app_; }

  /// Parse the arguments into the flags added to app(). nullopt: go on and serve. Otherwise
  /// the status to exit with, CLI11's message already printed: 0 after --help, CLI11's
  /// non-zero code on a flag it refuses (what CLI11_PARSE returns).
  std::optional<int> parse(int argc, char** argv);

 private:
  std::unique_ptr<CLI::App> app_;
};

}  // namespace handoff::config
