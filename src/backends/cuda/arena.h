#pragma once
// The device memory arena: every byte the CUDA backend uses (weights, KV cache, activations,
// workspaces) comes from here. Memory is taken from the driver in large chunks and handed out
// in 256-byte-aligned blocks; freed blocks go to a best-fit free list and are reused, so steady
// state (the decode loop) never calls cudaMalloc or cudaFree. Memory returns to the driver only
// when the arena is destroyed.
#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace lathe::cuda {

enum class MemoryPurpose { kWeights, kKvCache, kActivations, kWorkspace, kOther };
inline constexpr int kMemoryPurposeCount = 5;
const char* memory_purpose_name(MemoryPurpose purpose);

class DeviceArena {
 public:
  static constexpr size_t kAlignment = 256;
  static constexpr size_t kDefaultChunkBytes = size_t{256} << 20;

  explicit DeviceArena(size_t chunk_bytes = kDefaultChunkBytes);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Throws lathe::Error (naming the request, the purpose and what is already held) when the
  // device has no memory left.
  void* allocate(size_t bytes, MemoryPurpose purpose);
  // Returns a block to the free list. Null is ignored; a pointer the arena did not hand out
  // throws lathe::Error.
  void release(void* ptr);

  size_t reserved_bytes() const;                    // taken from the driver
  size_t in_use_bytes(MemoryPurpose purpose) const;  // handed out and not released

 private:
  struct Chunk {
    char* base = nullptr;
    size_t size = 0;
    size_t used = 0;
  };
  struct Block {
    size_t size = 0;
    MemoryPurpose purpose = MemoryPurpose::kOther;
  };

  void* carve(size_t bytes);

  size_t chunk_bytes_;
  mutable std::mutex mutex_;
  std::vector<Chunk> chunks_;
  std::multimap<size_t, void*> free_blocks_;  // size -> block
  std::unordered_map<void*, Block> live_;
  std::array<size_t, kMemoryPurposeCount> in_use_{};
  size_t reserved_ = 0;
};

}  // namespace lathe::cuda
