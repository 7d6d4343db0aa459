// exercises/06-settings-order/learners: puts the profile where --like stood, so a --config named before it loses
// (chapter 06; a learner's answer the tests must fail).
#include "profile_args.h"

#include <filesystem>

namespace exercise {

std::optional<std::vector<std::string>> with_profile(std::vector<std::string> args, const std::string& dir) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name;
    if (args[i] == "--like" && i + 1 < args.size()) {
      name = args[++i];
    } else if (args[i].rfind("--like=", 0) == 0) {
      name = args[i].substr(7);
    } else {
      out.push_back(args[i]);
      continue;
    }
    const std::filesystem::path file = std::filesystem::path(dir) / (name + ".toml");
    if (name.find('/') != std::string::npos || !std::filesystem::is_regular_file(file)) return std::nullopt;
    out.push_back("--config");  // the profile's file in --like's place
    out.push_back(file.string());
  }
  return out;
}

}  // namespace exercise
