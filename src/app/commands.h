#pragma once
// Subcommand registry of the `lathe` binary. Each cmd_*.cpp defines one static Registration:
//
//   static const Registration kGenerate{"generate", "Generate text", [](CLI::App& cmd) {
//     ... add options ...; return [&]() -> int { ... run ...; return 0; };
//   }};
//
// The setup function adds the subcommand's flags (CLI11 validates them) and returns the action
// that runs when that subcommand was chosen. lathe::Error thrown by an action becomes one
// "error: ..." line on stderr and exit status 1.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace lathe::app {

using CommandAction = std::function<int()>;
using CommandSetup = std::function<CommandAction(CLI::App& command)>;

struct CommandInfo {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

// Help of --block-size, the flag of the commands that hold a KV cache (serve, generate, logits,
// bench latency), each of which checks it against [1, ops::kMaxKvBlockSize] with one error line.
inline constexpr const char* kBlockSizeHelp =
    "KV-cache block size in tokens, 1..1024 (a multiple of 64 lets the CUDA prefill attention copy whole "
    "tiles)";

struct Registration {
  Registration(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace lathe::app
