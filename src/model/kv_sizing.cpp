#include "model/kv_sizing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace lathe::model {

std::string format_gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

int32_t kv_blocks_for_budget(const KvMemoryBudget& b, size_t bytes_per_block, int32_t min_blocks) {
  if (!(b.utilization > 0.0 && b.utilization <= 1.0)) {
    fail("--gpu-memory-utilization {} must be in (0, 1]", b.utilization);
  }
  if (bytes_per_block == 0) fail("internal: KV block size in bytes is 0");
  const double total = static_cast<double>(b.total_bytes);
  const double used = static_cast<double>(b.total_bytes - std::min(b.free_bytes, b.total_bytes));
  const double left = b.utilization * total - used - static_cast<double>(b.reserve_bytes);
  const double blocks = left > 0 ? std::floor(left / static_cast<double>(bytes_per_block)) : 0.0;
  if (blocks < min_blocks) {
    fail("--gpu-memory-utilization {}: {} of the device's {} leaves {} for the KV cache after {} in use (weights "
         "included) and {} reserved for a step; at least {} ({} blocks: one --max-model-len sequence plus the "
         "scratch block) is needed. Raise --gpu-memory-utilization or lower --max-model-len",
         b.utilization, format_gib(b.utilization * total), format_gib(total), format_gib(std::max(left, 0.0)),
         format_gib(used), format_gib(static_cast<double>(b.reserve_bytes)),
         format_gib(static_cast<double>(min_blocks) * static_cast<double>(bytes_per_block)), min_blocks);
  }
  return static_cast<int32_t>(std::min(blocks, static_cast<double>(std::numeric_limits<int32_t>::max())));
}

}  // namespace lathe::model
