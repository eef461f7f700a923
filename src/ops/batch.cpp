#include "ops/batch.h"

#include <algorithm>

namespace lathe::ops {

int32_t ForwardBatch::max_query_len() const {
  int32_t longest = 0;
  for (size_t s = 0; s + 1 < query_start.size(); ++s) longest = std::max(longest, query_start[s + 1] - query_start[s]);
  return longest;
}

int32_t ForwardBatch::max_context_len() const {
  int32_t longest = 0;
  for (int32_t len : context_lens) longest = std::max(longest, len);
  return longest;
}

}  // namespace lathe::ops
