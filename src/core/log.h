#pragma once
// Logging (spdlog to stderr) and the "log once" latch: one line per route decision per process,
// so any quoted number can be traced to the arms that produced it.
#include <spdlog/spdlog.h>

#include <string_view>

namespace lathe {

// Configures the default logger (stderr, "[lathe] level" prefix). LATHE_LOG_LEVEL overrides.
void init_logging();

// True the first time it is called with `key` in this process, false afterwards (thread-safe).
bool log_once(std::string_view key);

}  // namespace lathe
