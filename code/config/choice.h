// config/choice: a flag whose value is one of a few names, bound to an enum (chapter 01; a
// file of its own since chapter 06's --print-config).
// Changed in chapter 06: a choice printed back for --print-config.
// Role: --dispatch inline|pool, --turn generation|drain and their kind keep the NAME the user
// gave as the option's result, and set the enum from it. (CLI11's CheckedTransformer would
// replace the result with the enum's number, so --print-config would write `dispatch=1`.)
// Include it only from the files of the cli11 unity group (code/CMakeLists.txt): it
// compiles CLI11.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace handoff::config {

/// Add `name` to `app`: one of `names`' keys (any case), which sets `target` to its value.
/// The default shown is `target`'s name when the option is added.
template <class T>
CLI::Option* add_choice(CLI::App& app, const std::string& name, T& target, const std::map<std::string, T>& names,
                        const std::string& help) {
  std::vector<std::string> keys;
  std::string shown;
  for (const auto& [key, value] : names) {
    keys.push_back(key);
    if (value == target) shown = key;
  }
  // As a transform (a check's rewrite is discarded), IsMember with ignore_case rewrites the
  // result to the key it matched, so the callback and --print-config see the canonical name.
  return app
      .add_option_function<std::string>(
          name, [&target, names](const std::string& key) { target = names.at(key); }, help)
      ->transform(CLI::IsMember(keys, CLI::ignore_case))
      ->default_str(shown);
}

}  // namespace handoff::config
