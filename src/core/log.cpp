#include "core/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace lathe {

void init_logging() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto logger = spdlog::stderr_color_mt("lathe");
    logger->set_pattern("[lathe] %^%l%$ %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(spdlog::level::info);
    if (const char* level = std::getenv("LATHE_LOG_LEVEL")) {
      spdlog::set_level(spdlog::level::from_str(level));
    }
  });
}

bool log_once(std::string_view key) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.contains(key)) return false;
  seen.emplace(key);
  return true;
}

}  // namespace lathe
