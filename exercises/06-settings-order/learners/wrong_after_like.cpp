// exercises/06-settings-order/learners: the profile's file goes in where --like was written
// ("the profile is applied where the operator asked for it"). A --config named before
// --like is then read after the profile, and the profile beats it.
#include "profile_args.h"

#include <filesystem>

namespace exercise {

std::optional<std::vector<std::string>> with_profile(std::vector<std::string> args, const std::string& dir) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name;
    std::size_t width = 0;
    if (args[i] == "--like" && i + 1 < args.size()) {
      name = args[i + 1];
      width = 2;
    } else if (args[i].rfind("--like=", 0) == 0) {
      name = args[i].substr(7);
      width = 1;
    } else {
      continue;
    }
    if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
    const std::filesystem::path file = std::filesystem::path(dir) / (name + ".toml");
    if (!std::filesystem::is_regular_file(file)) return std::nullopt;
    args.insert(args.begin() + static_cast<std::ptrdiff_t>(i + width), {"--config", file.string()});
    return args;
  }
  return args;
}

}  // namespace exercise
