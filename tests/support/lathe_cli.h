#pragma once
// Running the built `lathe` binary from CLI tests: the command goes through the shell with stdout
// and stderr captured in files of a per-process temporary directory.
#include <filesystem>
#include <string>

namespace lathe::testing {

struct CliOutcome {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// The whole file (empty when it cannot be read).
std::string read_file(const std::filesystem::path& path);

// <system temp>/lathe_<tag>_<pid>, created.
std::filesystem::path temp_dir(const std::string& tag);

// Runs `<env_prefix> lathe ARGS` (ARGS already shell-quoted where needed; env_prefix e.g.
// "env -u LATHE_PROFILE LATHE_PROFILE=1" or empty), capturing stdout and stderr in
// temp_dir(tag).
CliOutcome run_lathe(const std::string& tag, const std::string& args, const std::string& env_prefix = "");

}  // namespace lathe::testing
