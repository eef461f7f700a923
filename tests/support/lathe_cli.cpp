#include "lathe_cli.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lathe::testing {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path temp_dir(const std::string& tag) {
  const auto dir = std::filesystem::temp_directory_path() / ("lathe_" + tag + "_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

CliOutcome run_lathe(const std::string& tag, const std::string& args, const std::string& env_prefix) {
  const auto dir = temp_dir(tag);
  const std::string command = env_prefix + (env_prefix.empty() ? "" : " ") + "'" + LATHE_BINARY + "' " + args +
                              " >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  const int raw = std::system(command.c_str());
  CliOutcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  outcome.out = read_file(dir / "out");
  outcome.err = read_file(dir / "err");
  return outcome;
}

}  // namespace lathe::testing
