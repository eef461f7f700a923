// lathe: one binary, many subcommands (app/commands.h). Errors from bad input end the process
// with one clear line and a non-zero status, never a crash.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "core/log.h"

namespace lathe::app {

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

}  // namespace lathe::app

int main(int argc, char** argv) {
  using namespace lathe::app;
  lathe::init_logging();
  CLI::App app{"lathe: an LLM inference and serving engine for the Qwen3 family"};
  app.require_subcommand(1);
  std::vector<CommandInfo> commands = command_registry();
  std::sort(commands.begin(), commands.end(), [](const CommandInfo& a, const CommandInfo& b) { return a.name < b.name; });
  std::vector<std::pair<CLI::App*, CommandAction>> actions;
  for (const CommandInfo& info : commands) {
    CLI::App* sub = app.add_subcommand(info.name, info.description);
    actions.emplace_back(sub, info.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  try {
    for (auto& [sub, action] : actions) {
      if (sub->parsed()) return action();
    }
  } catch (const lathe::Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: internal: %s\n", error.what());
    return 2;
  }
  return 0;
}
