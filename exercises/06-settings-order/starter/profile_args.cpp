// exercises/06-settings-order/starter: finds the profile and reads it, and is wrong. Fix it.
#include "profile_args.h"

namespace exercise {

std::optional<std::vector<std::string>> with_profile(std::vector<std::string> args, const std::string& dir) {
  std::string name;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--like") name = args[i + 1];
  }
  if (name.empty()) return args;
  args.push_back("--config");
  args.push_back(dir + "/" + name + ".toml");
  return args;
}

}  // namespace exercise
