// config/command_line: the command line a stage binary, probe or tool parses (chapter 01; a
// home of its own since the build-budget work of chapter 05).
// Changed in chapter 06: settings from files and from the environment, secrets shown hidden.
// Role: owns CLI11's parser behind a forward declaration, so that no composition root, probe
// or peer compiles CLI11 (five to eight CPU seconds a file at -O2: its formatter's and config
// reader's virtual functions and validators are emitted wherever the header is included). A
// stage adds the library's flags through `app()` (server/options, pool/ring_flags,
// evloop/loop_flags, app/db_route, all compiled in one unit); a tool adds its own through
// add_option/add_flag, refined by the Option handle they return.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

  /// The value must be a finite number in [lo, hi] (inclusive), read from its text before
  /// any conversion (config/bounds: `-1` for a size, `nan` and `1e300` are refused).
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

/// A stage's, probe's or tool's command line, with CLI11 behind a forward declaration.
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

  /// Chapter 06: settings from files, as a deployed server takes them. Adds `--config FILE`
  /// (TOML, read by CLI11; repeatable: a later file wins over an earlier one, and the
  /// command line over every file), `--print-config` (write the effective settings in the
  /// same format, then exit 0: fed back through --config it gives the same settings) and
  /// `--like NAME` (a profile: `profile_dir`/NAME.toml, read as the first config file, so
  /// that any --config or flag overrides it; `--like help` lists the profiles, each with
  /// its file's first comment line).
  void add_config_files(std::string profile_dir);

  /// Chapter 06: every setting (each option a file may set) may also come from the
  /// environment, as `prefix` + its long name in capitals with '_' for '-'
  /// (`HANDOFF_MAX_BODY` for --max-body), read by the same parser, ranges and refusals as the
  /// flag. A flag wins over the environment, which wins over every --config file and profile.
  /// An empty variable is not set.
  void settings_from_environment(std::string prefix);

  /// Chapter 06: what the start-up line, /stats, /metrics and --print-config show of `flag`'s
  /// value is `hide(value)` (a connection string's password as `***`).
  void redact(const std::string& flag, std::function<std::string(const std::string&)> hide);

  /// Change an option's default after it was added (a later stage's better default): the
  /// value is checked and converted as if given, and --help shows it. `flag`: "--dispatch".
  void default_to(const std::string& flag, const std::string& value);

  /// The profile --like named, "" without one (after parse()).
  const std::string& profile() const noexcept { return profile_; }

  /// Each option a flag, the environment or a config file set (profile included), as
  /// "--name" and its value (redacted where redact() says), in the order the options were
  /// added (after parse()). What is not here has its default; --print-config shows those too.
  std::vector<std::pair<std::string, std::string>> given_settings() const;

  /// Parse the arguments into the options and flags added. nullopt: go on. Otherwise the
  /// status to exit with, its one line already printed on stderr: 0 after --help; 78
  /// (EX_CONFIG) for a settings file that cannot be read, is not TOML, or names a key or
  /// table no setting has (config/settings_file); CLI11's code for a value refused, from
  /// whichever source (105 out of range or not one of the words, 104 not convertible, 109 an
  /// argument not expected), the line naming the setting, where its value came from and what
  /// it takes.
  std::optional<int> parse(int argc, char** argv);

 private:
  std::unique_ptr<CLI::App> app_;
  std::vector<std::unique_ptr<Option>> options_;  // stable addresses for the handles
  std::string profile_dir_;  // add_config_files(): where --like finds NAME.toml
  std::string profile_;      // --like's value
  bool print_config_ = false;
  std::string env_prefix_;   // settings_from_environment()
  std::vector<std::pair<std::string, std::function<std::string(const std::string&)>>> redactions_;
  std::vector<std::string> args_;  // what parse() parsed, for naming a value's source
  struct FileKey {
    std::string key, file;
    std::size_t line;
  };
  std::vector<FileKey> file_keys_;  // every key of every --config file, in the order given

  /// The long names of the options a settings file may set.
  std::vector<std::string> settable() const;
  /// Check every --config file (the profile's included) before CLI11 reads them; the first
  /// that cannot be used prints its one line and gives 78.
  std::optional<int> check_settings_files();
  /// Where `option`'s value came from: "the command line", "environment VAR" or
  /// "config file PATH, line N".
  std::string source_of(const CLI::Option& option) const;
  /// The one line and status for a refusal CLI11 threw while parsing.
  int refuse(const std::exception& error, int status) const;
  /// `option`'s value as shown (redacted).
  std::string shown(const CLI::Option& option, const std::string& value) const;

  /// --like's part of parse(): nullopt and the arguments to parse (the profile's file put
  /// first), or the status to exit with (after --like help, or an unknown profile).
  std::optional<int> expand_profile(std::vector<std::string>& args) const;

  Option* keep(CLI::Option* option);
  template <class T>
  Option* bind(const std::string& name, T& value, const std::string& help);
};

}  // namespace handoff::config
