#pragma once
// The one exception type lathe throws for bad input (files, configs, flags, requests).
// Messages name the file, tensor, field or flag at fault; the CLI prints them as one line and
// the server turns them into OpenAI-style error JSON.
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace lathe {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace lathe
