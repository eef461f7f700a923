#include "app/cli_lists.h"

#include <charconv>

#include "core/error.h"

namespace lathe::app {

std::vector<int64_t> parse_int_list(const std::string& text, int64_t min_value, const char* flag,
                                    const char* expected) {
  std::vector<int64_t> values;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    size_t first = pos;
    size_t last = end;
    while (first < last && text[first] == ' ') ++first;
    while (last > first && text[last - 1] == ' ') --last;
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + first, text.data() + last, value);
    if (first == last || ec != std::errc() || ptr != text.data() + last || value < min_value) {
      fail("{}: '{}' is not {}", flag, text.substr(first, last - first), expected);
    }
    values.push_back(value);
    pos = end + 1;
  }
  return values;
}

}  // namespace lathe::app
