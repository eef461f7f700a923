#pragma once
// Sizing the KV cache of a device backend from --gpu-memory-utilization (vLLM's rule): the
// cache takes what is left of utilization x total device memory once the weights, everything
// else already allocated, and the step's working memory are accounted for.
#include <cstddef>
#include <cstdint>
#include <string>

namespace lathe::model {

struct KvMemoryBudget {
  double utilization = 0.9;  // --gpu-memory-utilization, in (0, 1]
  size_t total_bytes = 0;    // the device's memory
  size_t free_bytes = 0;     // free now (weights already uploaded)
  size_t reserve_bytes = 0;  // still to be allocated for one step (scratch, logits, workspaces)
};

// Blocks of `bytes_per_block` (all layers' K and V of one block) that fit the budget, at least
// `min_blocks`. Throws lathe::Error naming --gpu-memory-utilization and the sizes when fewer fit.
int32_t kv_blocks_for_budget(const KvMemoryBudget& budget, size_t bytes_per_block, int32_t min_blocks);

// "12.3 GiB"
std::string format_gib(double bytes);

}  // namespace lathe::model
