// exercises/06-settings-order: the part of --like this exercise asks for (chapter 06).
// Given: the command line's arguments (program name dropped) and the folder of profile
// files. Write with_profile().
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace exercise {

/// The arguments for CLI11 to parse in place of `args`. When `args` name a profile
/// (`--like NAME` or `--like=NAME`), its file `dir/NAME.toml` is read as a config file
/// that every `--config` file and every flag on the command line overrides. CLI11 reads
/// the last config file first and keeps the first value it sees of each option; a flag
/// beats every file. nullopt: NAME is not a profile (a path rather than a plain name, or
/// no such file), which the caller refuses with exit status 64.
std::optional<std::vector<std::string>> with_profile(std::vector<std::string> args, const std::string& dir);

}  // namespace exercise
