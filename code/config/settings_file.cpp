// config/settings_file: one settings file read strictly, as an operator expects (chapter 06).
#include "config/settings_file.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace handoff::config {

namespace {

std::string where(const std::string& source, const toml::source_position& at) {
  return source + ":" + std::to_string(at.line) + ":" + std::to_string(at.column);
}

// A scalar's value as the text a flag would carry; nullopt-like "" with ok=false for a value
// no setting takes (a date, a time, a table, a nested array).
bool scalar_text(const toml::node& node, std::string& out) {
  if (const auto* s = node.as_string()) {
    out = s->get();
    return true;
  }
  if (const auto* i = node.as_integer()) {
    out = std::to_string(i->get());
    return true;
  }
  if (const auto* f = node.as_floating_point()) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, f->get());  // shortest round trip; inf, nan as such
    out.assign(buf, r.ptr);
    return true;
  }
  if (const auto* b = node.as_boolean()) {
    out = b->get() ? "true" : "false";
    return true;
  }
  return false;
}

}  // namespace

std::string nearest_name(const std::string& key, const std::vector<std::string>& known) {
  // Levenshtein distance, one row at a time.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& name : known) {
    const std::size_t d = distance(key, name);
    if (best.empty() || d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::vector<FileSetting> parse_settings(std::string_view text, const std::string& source,
                                        const std::vector<std::string>& known) {
  toml::table table;
  try {
    table = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw SettingsFileError(where(source, e.source().begin) + ": not TOML: " + std::string(e.description()));
  }
  std::vector<FileSetting> out;
  for (auto&& [key, node] : table) {
    const std::string name(key.str());
    const std::string at = where(source, key.source().begin);
    // [settings_file.key]
    if (node.is_table() || node.is_array_of_tables()) {
      throw SettingsFileError(at + ": a table ('" + name +
                              "') is not a setting; settings are top-level `key = value` lines");
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      const std::string nearest = nearest_name(name, known);
      throw SettingsFileError(at + ": unknown setting '" + name + "'" +
                              (nearest.empty() ? std::string() : " (the nearest is '" + nearest + "')"));
    }
    // [settings_file.key]
    FileSetting setting{name, {}, key.source().begin.line, key.source().begin.column};
    std::string value;
    if (const auto* list = node.as_array()) {
      for (const toml::node& element : *list) {
        if (!scalar_text(element, value)) {
          throw SettingsFileError(where(source, element.source().begin) + ": '" + name +
                                  "' takes a list of numbers, words or booleans");
        }
        setting.values.push_back(value);
      }
    } else if (scalar_text(node, value)) {
      setting.values.push_back(value);
    } else {
      throw SettingsFileError(where(source, node.source().begin) + ": '" + name +
                              "' takes a number, a word or a boolean, not a date or a time");
    }
    out.push_back(std::move(setting));
  }
  std::sort(out.begin(), out.end(), [](const FileSetting& a, const FileSetting& b) { return a.line < b.line; });
  return out;
}

std::vector<FileSetting> read_settings_file(const std::string& path, const std::vector<std::string>& known) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    throw SettingsFileError(path + ": cannot read: " + (ec ? ec.message() : std::string(std::strerror(ENOENT))));
  }
  if (std::filesystem::is_directory(status)) throw SettingsFileError(path + ": cannot read: " + std::strerror(EISDIR));
  if (!std::filesystem::is_regular_file(status)) throw SettingsFileError(path + ": cannot read: not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SettingsFileError(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw SettingsFileError(path + ": cannot read: " + std::strerror(errno));
  return parse_settings(text.str(), path, known);
}

}  // namespace handoff::config
