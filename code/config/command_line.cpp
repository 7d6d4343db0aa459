// config/command_line: the command line a stage binary, probe or tool parses (chapter 01).
// Changed in chapter 06: settings from files and from the environment, secrets shown hidden.
#include "config/command_line.h"

#include <CLI/CLI.hpp>
#include <sysexits.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/bounds.h"
#include "config/settings_file.h"

namespace handoff::config {

Option* Option::range(double lo, double hi) {
  option_->check(number_in(lo, hi));
  return this;
}

Option* Option::one_of(std::vector<std::string> names) {
  option_->check(CLI::IsMember(std::move(names)));
  return this;
}

Option* Option::show_default() {
  option_->capture_default_str();
  return this;
}

Option* Option::delimiter(char separator) {
  option_->delimiter(separator);
  return this;
}

Option* Option::required() {
  option_->required();
  return this;
}

Option* Option::excludes(Option* other) {
  option_->excludes(other->option_);
  return this;
}

Option* Option::excludes(const std::string& other) {
  option_->excludes(other);
  return this;
}

bool Option::given() const { return option_->count() > 0; }

namespace {

// CLI11 reads each --config file through this. parse() has already checked every file
// (check_settings_files), so here a file only becomes CLI11's items; a key whose environment
// variable is set is left out, so that the environment wins over a file (CLI11 alone reads
// the files before the environment, and keeps the first value an option gets).
class SettingsFileFormat final : public CLI::ConfigBase {
 public:
  SettingsFileFormat(const CLI::App& app, std::vector<std::string> settable)
      : app_(app), settable_(std::move(settable)) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& in) const override {
    std::ostringstream text;
    text << in.rdbuf();
    std::vector<CLI::ConfigItem> items;
    for (FileSetting& setting : parse_settings(text.str(), "--config", settable_)) {
      const CLI::Option* option = app_.get_option_no_throw("--" + setting.key);
      if (option != nullptr && !option->get_envname().empty()) {
        const char* env = std::getenv(option->get_envname().c_str());
        if (env != nullptr && *env != '\0') continue;
      }
      CLI::ConfigItem item;
      item.name = setting.key;
      item.inputs = std::move(setting.values);
      items.push_back(std::move(item));
    }
    return items;
  }

 private:
  const CLI::App& app_;
  std::vector<std::string> settable_;
};

bool is_settable(const CLI::Option* option) {
  return option->get_configurable() && !option->get_lnames().empty() && option->get_name() != "--help";
}

}  // namespace

CommandLine::CommandLine(const std::string& description) : app_(std::make_unique<CLI::App>(description)) {}

CommandLine::~CommandLine() = default;

Option* CommandLine::keep(CLI::Option* option) {
  options_.push_back(std::make_unique<Option>(option));
  return options_.back().get();
}

template <class T>
Option* CommandLine::bind(const std::string& name, T& value, const std::string& help) {
  return keep(app_->add_option(name, value, help));
}

Option* CommandLine::add_option(const std::string& n, int& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, std::uint16_t& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, unsigned& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, std::int64_t& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, std::uint64_t& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, double& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, std::string& v, const std::string& h) { return bind(n, v, h); }
Option* CommandLine::add_option(const std::string& n, std::vector<int>& v, const std::string& h) {
  return bind(n, v, h);
}
Option* CommandLine::add_option(const std::string& n, std::vector<unsigned>& v, const std::string& h) {
  return bind(n, v, h);
}
Option* CommandLine::add_option(const std::string& n, std::vector<double>& v, const std::string& h) {
  return bind(n, v, h);
}
Option* CommandLine::add_option(const std::string& n, std::vector<std::string>& v, const std::string& h) {
  return bind(n, v, h);
}

Option* CommandLine::add_flag(const std::string& name, bool& value, const std::string& help) {
  return keep(app_->add_flag(name, value, help));
}

void CommandLine::on_parsed(std::function<void()> callback) { app_->parse_complete_callback(std::move(callback)); }

void CommandLine::add_config_files(std::string profile_dir) {
  profile_dir_ = std::move(profile_dir);
  app_->set_config("--config", "", "read settings from a TOML file (repeatable; a later file, then a flag, wins)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app_->add_flag("--print-config", print_config_, "write the effective settings as TOML (for --config), then exit")
      ->configurable(false);
  app_->add_option("--like", profile_, "start from a profile's settings (--like help lists them)")->configurable(false);
}

namespace {

// A profile file's description: its first comment line, without the '#' and the spaces after it.
std::string first_comment(const std::filesystem::path& file) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('#', 0) != 0) continue;
    const auto text = line.find_first_not_of("# ");
    return text == std::string::npos ? std::string() : line.substr(text);
  }
  return {};
}

void list_profiles(const std::filesystem::path& dir, std::FILE* out) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::fprintf(out, "profiles (%s):\n", dir.c_str());
  for (const auto& f : files) std::fprintf(out, "  %-22s %s\n", f.stem().c_str(), first_comment(f).c_str());
}

}  // namespace

// [config.profile]
std::optional<int> CommandLine::expand_profile(std::vector<std::string>& args) const {
  std::string name;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--like" && i + 1 < args.size()) name = args[i + 1];
    if (args[i].rfind("--like=", 0) == 0) name = args[i].substr(7);
  }
  if (name.empty()) return std::nullopt;
  if (name == "help") {
    list_profiles(profile_dir_, stdout);
    return 0;
  }
  const std::filesystem::path file = std::filesystem::path(profile_dir_) / (name + ".toml");
  if (name.find('/') != std::string::npos || !std::filesystem::is_regular_file(file)) {
    std::fprintf(stderr, "handoff: no profile '%s'\n", name.c_str());
    list_profiles(profile_dir_, stderr);
    return 64;  // EX_USAGE, as the stages' other start-up refusals of an argument
  }
  // First of the config files: CLI11 reads the last one first and keeps the first value it
  // sees of each option, so every --config the user gave, and every flag, overrides it.
  args.insert(args.begin(), {"--config", file.string()});
  return std::nullopt;
}
// [config.profile]

void CommandLine::settings_from_environment(std::string prefix) {
  app_->footer("Every setting --NAME may also be given in the environment as " + prefix +
               "NAME (capitals, '_' for '-'), read as the flag is: a flag wins over the environment, which wins "
               "over every --config file and profile.\n");
  env_prefix_ = std::move(prefix);
}

void CommandLine::redact(const std::string& flag, std::function<std::string(const std::string&)> hide) {
  redactions_.emplace_back(flag, std::move(hide));
}

std::vector<std::string> CommandLine::settable() const {
  std::vector<std::string> names;
  for (const CLI::Option* option : app_->get_options()) {
    if (is_settable(option)) names.push_back(option->get_lnames().front());
  }
  return names;
}

std::string CommandLine::shown(const CLI::Option& option, const std::string& value) const {
  for (const auto& [flag, hide] : redactions_) {
    if (option.check_name(flag)) return hide(value);
  }
  return value;
}

std::optional<int> CommandLine::check_settings_files() {
  const std::vector<std::string> keys = settable();
  for (std::size_t i = 0; i < args_.size(); ++i) {
    std::string file;
    if (args_[i] == "--config" && i + 1 < args_.size()) file = args_[i + 1];
    if (args_[i].rfind("--config=", 0) == 0) file = args_[i].substr(9);
    if (file.empty()) continue;
    try {
      for (const FileSetting& setting : read_settings_file(file, keys)) {
        file_keys_.push_back({setting.key, file, setting.line});
      }
    } catch (const SettingsFileError& e) {
      std::fprintf(stderr, "handoff: bad config file %s\n", e.what());
      return EX_CONFIG;
    }
  }
  return std::nullopt;
}

std::string CommandLine::source_of(const CLI::Option& option) const {
  for (const std::string& arg : args_) {
    for (const std::string& name : option.get_lnames()) {
      if (arg == "--" + name || arg.rfind("--" + name + "=", 0) == 0) return "the command line";
    }
  }
  const std::string env = option.get_envname();
  const char* value = env.empty() ? nullptr : std::getenv(env.c_str());
  if (value != nullptr && *value != '\0') return "environment " + env;
  // CLI11 keeps the first value it reads, and it reads the last file first.
  for (auto it = file_keys_.rbegin(); it != file_keys_.rend(); ++it) {
    if (option.check_lname(it->key)) return "config file " + it->file + ", line " + std::to_string(it->line);
  }
  return "its default";
}

int CommandLine::refuse(const std::exception& error, int status) const {
  // CLI11 names the option in its words: "--workers: expected ..." (a check refused the
  // value) or "Could not convert: --stats = maybe" (the conversion did).
  const std::string what = error.what();
  const CLI::Option* option = nullptr;
  for (std::size_t at = what.find("--"); at != std::string::npos && option == nullptr; at = what.find("--", at + 2)) {
    const std::size_t end = what.find_first_of(" :=", at);
    option = app_->get_option_no_throw(what.substr(at, end == std::string::npos ? end : end - at));
  }
  if (option != nullptr) {
    const std::string prefix = option->get_name() + ": ";
    const std::string why = what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
    std::fprintf(stderr, "handoff: bad setting %s (from %s): %s\n", option->get_name().c_str(),
                 source_of(*option).c_str(), why.c_str());
  } else {
    std::fprintf(stderr, "handoff: %s (--help lists the settings)\n", what.c_str());
  }
  return status;
}

void CommandLine::default_to(const std::string& flag, const std::string& value) {
  app_->get_option(flag)->run_callback_for_default()->default_val(value);
}

std::vector<std::pair<std::string, std::string>> CommandLine::given_settings() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::Option* opt : app_->get_options()) {
    if (!opt->get_configurable() || opt->count() == 0 || opt->get_lnames().empty()) continue;
    std::string value;
    for (const auto& v : opt->reduced_results()) value += (value.empty() ? "" : ",") + v;
    out.emplace_back("--" + opt->get_lnames().front(), shown(*opt, value));
  }
  return out;
}

std::optional<int> CommandLine::parse(int argc, char** argv) {
  args_.assign(argv + 1, argv + argc);
  if (app_->get_name().empty() && argc > 0) app_->name(argv[0]);  // for --help, as parse(argc, argv) does
  const bool help = std::any_of(args_.begin(), args_.end(), [](const std::string& a) { return a == "-h" || a == "--help"; });
  if (!profile_dir_.empty() && !help) {
    if (const auto exit = expand_profile(args_)) return exit;
    if (const auto exit = check_settings_files()) return exit;
    app_->config_formatter(std::make_shared<SettingsFileFormat>(*app_, settable()));
  }
  if (!env_prefix_.empty()) {
    for (CLI::Option* option : app_->get_options()) {
      if (!is_settable(option)) continue;
      std::string env = env_prefix_ + option->get_lnames().front();
      for (char& c : env) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      option->envname(env);
    }
  }
  try {
    std::vector<std::string> reversed(args_.rbegin(), args_.rend());  // CLI11 takes a vector last argument first
    app_->parse(reversed);
  } catch (const CLI::Success& e) {  // --help
    return app_->exit(e);
  } catch (const CLI::ParseError& e) {
    return refuse(e, e.get_exit_code());
  } catch (const SettingsFileError& e) {  // changed between the check and the read
    std::fprintf(stderr, "handoff: bad config file %s\n", e.what());
    return EX_CONFIG;
  }
  if (print_config_) {
    // The effective settings, the environment's included; a redacted value as shown.
    for (const auto& [flag, hide] : redactions_) {
      CLI::Option* option = app_->get_option_no_throw(flag);
      if (option == nullptr || option->count() == 0) continue;
      const std::string value = option->as<std::string>();
      option->clear();
      option->add_result(hide(value));
    }
    if (!profile_.empty()) std::cout << "# profile: " << profile_ << "\n";
    std::string text = app_->config_to_str(true, false);
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::cout << text;
    return 0;
  }
  return std::nullopt;
}

}  // namespace handoff::config
