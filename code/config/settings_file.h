// config/settings_file: one settings file read strictly, as an operator expects (chapter 06;
// a home of its own since issue 38).
// Role: a TOML file of top-level `key = value` lines, each key a setting's long name
// (`max-body = 65536`), read with toml++ (Debian libtomlplusplus-dev), a full TOML 1.0 parser.
// Everything an operator can get wrong is refused with one line that names the file, the line
// and the column: a file that cannot be read, TOML that does not parse, a key no setting has
// (with the nearest one that exists), a table (`[server]`), a value of no setting's type (a
// date, a table). A UTF-8 byte-order mark is accepted, as TOML allows. What it returns is
// each setting's value as the text a flag would carry, so that a file's value goes through
// the same parser, ranges and refusals as the flag's (config/command_line).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::config {

/// One `key = value` line: the setting's long name, its value as a flag's text (a list
/// gives one text per element), and where the key stands.
struct FileSetting {
  std::string key;
  std::vector<std::string> values;
  std::size_t line = 0;
  std::size_t column = 0;
};

/// A settings file that cannot be used: what() is the one line to print, starting with the
/// file's name (and `:LINE:COLUMN` where there is one).
class SettingsFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parse `text` (named `source` in errors) as a settings file whose keys must be among
/// `known` (the settings' long names, without dashes). Throws SettingsFileError.
std::vector<FileSetting> parse_settings(std::string_view text, const std::string& source,
                                        const std::vector<std::string>& known);

/// Read `path` and parse it as parse_settings() does; a path that is missing, a directory or
/// unreadable is a SettingsFileError too ("PATH: cannot read: REASON").
std::vector<FileSetting> read_settings_file(const std::string& path, const std::vector<std::string>& known);

/// The name in `known` closest to `key` by edit distance ("" when `known` is empty).
std::string nearest_name(const std::string& key, const std::vector<std::string>& known);

}  // namespace handoff::config
