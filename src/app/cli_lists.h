#pragma once
// Comma-separated integer lists on the command line ("1,4,16,64", "151644, 872, 198").
#include <cstdint>
#include <string>
#include <vector>

namespace lathe::app {

// Parses every field (spaces around a field are allowed) as an integer >= min_value. An empty or
// malformed field is a lathe::Error naming `flag`, the field and `expected` (what a good list is).
std::vector<int64_t> parse_int_list(const std::string& text, int64_t min_value, const char* flag,
                                    const char* expected);

}  // namespace lathe::app
