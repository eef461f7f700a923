// The decode GEMV's split-K scratch (gemv.h, "Split-K scratch"): one device allocation carved into
// the partial sums, the per-CTA arrival counters and the split slots, each 256-byte aligned.
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/cuda/check.h"
#include "backends/cuda/gemv.h"

namespace lathe::cuda {

namespace {
constexpr size_t align256(size_t bytes) {
  return (bytes + 255) / 256 * 256;
}
constexpr size_t kPartialBytes = align256(kGemvPartialFloats * sizeof(float));
constexpr size_t kCounterBytes = align256(kGemvCounterCount * sizeof(int));
constexpr size_t kSlotBytes = align256(kGemvSplitSlots * sizeof(uint64_t));
}  // namespace

size_t gemv_workspace_bytes() {
  return kPartialBytes + kCounterBytes + kSlotBytes;
}

GemvWorkspace gemv_workspace_in(void* base, cudaStream_t stream) {
  auto* bytes = static_cast<uint8_t*>(base);
  GemvWorkspace ws;
  ws.partials = reinterpret_cast<float*>(bytes);
  ws.partial_floats = kGemvPartialFloats;
  ws.counters = reinterpret_cast<int*>(bytes + kPartialBytes);
  ws.counter_count = kGemvCounterCount;
  ws.split_slots = reinterpret_cast<uint64_t*>(bytes + kPartialBytes + kCounterBytes);
  ws.split_slot_count = kGemvSplitSlots;
  LATHE_CUDA_CHECK(cudaMemsetAsync(ws.counters, 0, kCounterBytes + kSlotBytes, stream));
  return ws;
}

}  // namespace lathe::cuda
