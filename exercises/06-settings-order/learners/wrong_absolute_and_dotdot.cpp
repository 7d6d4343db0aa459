// exercises/06-settings-order/learners: refuses a leading '/' and '..', but not a name with a '/' inside (chapter 06; a
// learner's answer the tests must fail).
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
  const std::filesystem::path given(name);
  if (given.is_absolute() || name.find("..") != std::string::npos) return std::nullopt;
  const std::filesystem::path file = std::filesystem::path(dir) / (name + ".toml");
  if (!std::filesystem::is_regular_file(file)) return std::nullopt;
  args.insert(args.begin(), {"--config", file.string()});
  return args;
}

}  // namespace exercise
