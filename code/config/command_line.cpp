// config/command_line: the command line a stage binary, probe or tool parses (chapter 01).
#include "config/command_line.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace handoff::config {

Option* Option::range(double lo, double hi) {
  option_->check(CLI::Range(lo, hi));
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

void CommandLine::default_to(const std::string& flag, const std::string& value) {
  app_->get_option(flag)->run_callback_for_default()->default_val(value);
}

std::vector<std::pair<std::string, std::string>> CommandLine::given_settings() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::Option* opt : app_->get_options()) {
    if (!opt->get_configurable() || opt->count() == 0 || opt->get_lnames().empty()) continue;
    std::string value;
    for (const auto& v : opt->reduced_results()) value += (value.empty() ? "" : ",") + v;
    out.emplace_back("--" + opt->get_lnames().front(), value);
  }
  return out;
}

std::optional<int> CommandLine::parse(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (app_->get_name().empty() && argc > 0) app_->name(argv[0]);  // for --help, as parse(argc, argv) does
  if (!profile_dir_.empty()) {
    if (const auto exit = expand_profile(args)) return exit;
  }
  try {
    std::reverse(args.begin(), args.end());  // CLI11 takes a vector last argument first
    app_->parse(args);
  } catch (const CLI::ParseError& e) {
    return app_->exit(e);
  }
  if (print_config_) {
    // Only what CLI11 holds: a HANDOFF_* environment override applies on top of these.
    if (!profile_.empty()) std::cout << "# profile: " << profile_ << "\n";
    std::string text = app_->config_to_str(true, false);
    if (!text.empty() && text.back() != '\n') text += '\n';
    std::cout << text;
    return 0;
  }
  return std::nullopt;
}

}  // namespace handoff::config
