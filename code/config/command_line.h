// config/command_line: the command line a stage binary, probe or tool parses (chapter 01; a
// home of its own since the build-budget work of chapter 05).
// Role: owns CLI11's parser behind a forward declaration, so that no composition root, probe
// or peer compiles CLI11 (five to eight CPU seconds a file at -O2: its formatter's and config
// reader's virtual functions and validators are emitted wherever the header is included). A
// stage adds the library's flags through `app()` (server/options, pool/ring_flags,
// evloop/loop_flags, app/db_route, all compiled in one unit); a tool adds its own through
// add_option/add_flag, refined by the Option handle they return.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace handoff::config {

/// One option of a CommandLine, to refine where it was added: `->range(1, 1000)`. Owned by
/// its CommandLine; every call returns the same handle so that refinements chain.
class Option {
 public:
  explicit Option(CLI::Option* option) noexcept : option_(option) {}

  /// The value must lie in [lo, hi] (inclusive), checked as a number.
  Option* range(double lo, double hi);
  /// The value (each value, for a list) must be one of `names`.
  Option* one_of(std::vector<std::string> names);
  /// --help shows the variable's value at the time it was added.
  Option* show_default();
  /// A list option also takes its values as one argument split at `separator` ("0,50").
  Option* delimiter(char separator);
  Option* required();
  /// Giving both this option and `other` (a handle, or an option's name: "--json") is a
  /// usage error.
  Option* excludes(Option* other);
  Option* excludes(const std::string& other);

  /// Whether the command line gave this option (after parse()).
  bool given() const;

 private:
  CLI::Option* option_;
};

class CommandLine {
 public:
  explicit CommandLine(const std::string& description);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  /// For the library's flag adders (they take CLI::App&, declared without CLI11).
  CLI::App& app() noexcept { return *app_; }

  /// An option bound to `value`; `name` in CLI11's form ("-c,--connections", "url,--url").
  Option* add_option(const std::string& name, int& value, const std::string& help);
  Option* add_option(const std::string& name, std::uint16_t& value, const std::string& help);  // a port
  Option* add_option(const std::string& name, unsigned& value, const std::string& help);
  Option* add_option(const std::string& name, std::int64_t& value, const std::string& help);
  Option* add_option(const std::string& name, std::uint64_t& value, const std::string& help);
  Option* add_option(const std::string& name, double& value, const std::string& help);
  Option* add_option(const std::string& name, std::string& value, const std::string& help);
  Option* add_option(const std::string& name, std::vector<int>& value, const std::string& help);
  Option* add_option(const std::string& name, std::vector<unsigned>& value, const std::string& help);
  Option* add_option(const std::string& name, std::vector<double>& value, const std::string& help);
  Option* add_option(const std::string& name, std::vector<std::string>& value, const std::string& help);
  Option* add_flag(const std::string& name, bool& value, const std::string& help);

  /// Runs after a successful parse, before parse() returns (to derive names from flags).
  void on_parsed(std::function<void()> callback);

  /// Parse the arguments into the options and flags added. nullopt: go on. Otherwise the
  /// status to exit with, CLI11's message already printed: 0 after --help, CLI11's non-zero
  /// code on an argument it refuses (what CLI11_PARSE returns).
  std::optional<int> parse(int argc, char** argv);

 private:
  std::unique_ptr<CLI::App> app_;
  std::vector<std::unique_ptr<Option>> options_;  // stable addresses for the handles

  Option* keep(CLI::Option* option);
  template <class T>
  Option* bind(const std::string& name, T& value, const std::string& help);
};

}  // namespace handoff::config
