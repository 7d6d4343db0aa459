// exercises/06-settings-order/learners: a name is valid when it is its own file name; the profile goes in front of a
// new list (chapter 06; a learner's answer the tests must pass).
#include "profile_args.h"

#include <filesystem>

namespace exercise {

std::optional<std::vector<std::string>> with_profile(std::vector<std::string> args, const std::string& dir) {
  std::optional<std::string> name;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--like" && i + 1 < args.size()) name = args[i + 1];
    if (args[i].rfind("--like=", 0) == 0) name = args[i].substr(7);
  }
  if (!name || name->empty()) return args;
  // A plain name is its own last component: "a/b", "/abs/x" and "../x" are not.
  const std::filesystem::path plain(*name);
  if (plain.filename() != plain || *name == "." || *name == "..") return std::nullopt;
  const std::filesystem::path file = std::filesystem::path(dir) / (*name + ".toml");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  std::vector<std::string> out{"--config", file.string()};  // first: read last, loses to all
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

}  // namespace exercise
