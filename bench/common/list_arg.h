#pragma once
// Command-line lists of the benchmarks: "a,b,c" -> {"a", "b", "c"} (empty items dropped).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::bench {

inline std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> items;
  for (size_t pos = 0; pos <= list.size();) {
    const size_t next = std::min(list.find(',', pos), list.size());
    if (next > pos) items.emplace_back(list.substr(pos, next - pos));
    pos = next + 1;
  }
  return items;
}

}  // namespace lathe::bench
