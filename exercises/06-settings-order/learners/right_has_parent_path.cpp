// exercises/06-settings-order/learners: a correct answer that asks std::filesystem whether
// the name has a parent path (any '/' in it does) and builds a new argument list with the
// profile's file first.
#include "profile_args.h"

#include <filesystem>

namespace exercise {

std::optional<std::vector<std::string>> with_profile(std::vector<std::string> args, const std::string& dir) {
  std::string name;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--like" && i + 1 < args.size()) name = args[i + 1];
    if (args[i].rfind("--like=", 0) == 0) name = args[i].substr(7);
  }
  if (name.empty()) return args;
  const std::filesystem::path as_path(name);
  if (as_path.has_parent_path() || as_path.is_absolute()) return std::nullopt;
  const std::filesystem::path file = std::filesystem::path(dir) / (name + ".toml");
  if (!std::filesystem::is_regular_file(file)) return std::nullopt;
  std::vector<std::string> out{"--config", file.string()};
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

}  // namespace exercise
