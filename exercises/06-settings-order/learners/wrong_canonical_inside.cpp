// exercises/06-settings-order/learners: a name is accepted when its file, made canonical,
// lies inside the profiles' folder ("that is what a path check is for"). It refuses ../ and
// absolute paths, but takes 'nested/x': a profile name is one plain name, not a path.
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
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(dir, ec);
  const fs::path file = fs::weakly_canonical(fs::path(dir) / (name + ".toml"), ec);
  const auto [end, _] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (ec || end != root.end()) return std::nullopt;  // outside the folder
  if (!fs::is_regular_file(file)) return std::nullopt;
  args.insert(args.begin(), {"--config", file.string()});
  return args;
}

}  // namespace exercise
