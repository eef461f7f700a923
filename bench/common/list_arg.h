#pragma once
// Command-line lists of the benchmarks: "a,b,c" -> {"a", "b", "c"} (empty items dropped).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::bench {

// Items of `list` between `separator`s, empty ones dropped.
inline std::vector<std::string> split_list_by(std::string_view list, char separator) {
  std::vector<std::string> items;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t next = std::min(list.find(separator, pos), list.size());
    if (next > pos) items.emplace_back(list.substr(pos, next - pos));
    pos = next + 1;
  }
  return items;
}

inline std::vector<std::string> split_list(std::string_view list) {
  return split_list_by(list, ',');
}

}  // namespace lathe::bench
