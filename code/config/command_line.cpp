// config/command_line: the command line a stage binary, probe or tool parses (chapter 01).
#include "config/command_line.h"

#include <CLI/CLI.hpp>

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

std::optional<int> CommandLine::parse(int argc, char** argv) {
  try {
    app_->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app_->exit(e);
  }
  return std::nullopt;
}

}  // namespace handoff::config
