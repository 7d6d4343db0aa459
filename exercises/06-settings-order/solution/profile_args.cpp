// exercises/06-settings-order/solution: the profile's file goes first of the config files;
// a name that is a path, or names no file, is refused. Built again with -D<MUTANT> for each
// of the README's mutants.
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
  const std::filesystem::path file = std::filesystem::path(dir) / (name + ".toml");
#if !defined(PATH_ALLOWED)
  if (name.find('/') != std::string::npos) return std::nullopt;
#endif
#if !defined(MISSING_IGNORED)
  if (!std::filesystem::is_regular_file(file)) return std::nullopt;
#endif
#if defined(PROFILE_LAST)
  args.insert(args.end(), {"--config", file.string()});
#else
  // First: CLI11 reads the last config file first and keeps the first value it sees, so a
  // file named first is read last and loses to every other file and every flag.
  args.insert(args.begin(), {"--config", file.string()});
#endif
  return args;
}

}  // namespace exercise
