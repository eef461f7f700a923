#include "backends/cuda/arena.h"

#include "backends/cuda/check.h"
#include "core/error.h"

namespace lathe::cuda {

const char* memory_purpose_name(MemoryPurpose purpose) {
  switch (purpose) {
    case MemoryPurpose::kWeights:
      return "weights";
    case MemoryPurpose::kKvCache:
      return "kv-cache";
    case MemoryPurpose::kActivations:
      return "activations";
    case MemoryPurpose::kWorkspace:
      return "workspace";
    case MemoryPurpose::kOther:
      return "other";
  }
  return "?";
}

DeviceArena::DeviceArena(size_t chunk_bytes) : chunk_bytes_(chunk_bytes) {}

DeviceArena::~DeviceArena() {
  for (const Chunk& chunk : chunks_) cudaFree(chunk.base);  // errors at teardown are not actionable
}

static size_t round_up(size_t value, size_t to) { return (value + to - 1) / to * to; }

void* DeviceArena::carve(size_t bytes) {
  for (Chunk& chunk : chunks_) {
    if (chunk.size - chunk.used >= bytes) {
      void* ptr = chunk.base + chunk.used;
      chunk.used += bytes;
      return ptr;
    }
  }
  // Large requests get a chunk of their own so they do not strand the tail of a shared chunk.
  const size_t size = bytes > chunk_bytes_ / 2 ? bytes : chunk_bytes_;
  void* base = nullptr;
  const cudaError_t status = cudaMalloc(&base, size);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    (void)cudaMemGetInfo(&free_bytes, &total_bytes);
    fail("CUDA out of memory: could not reserve {:.1f} MiB (arena holds {:.1f} MiB; device has {:.1f} MiB free of {:.1f})",
         size / 1048576.0, reserved_ / 1048576.0, free_bytes / 1048576.0, total_bytes / 1048576.0);
  }
  chunks_.push_back(Chunk{static_cast<char*>(base), size, bytes});
  reserved_ += size;
  return base;
}

void* DeviceArena::allocate(size_t bytes, MemoryPurpose purpose) {
  const size_t size = round_up(bytes == 0 ? 1 : bytes, kAlignment);
  std::lock_guard<std::mutex> lock(mutex_);
  void* ptr = nullptr;
  size_t block_size = size;
  // Best fit among freed blocks, accepting at most 2x the request so big blocks are not wasted
  // on small ones.
  auto it = free_blocks_.lower_bound(size);
  if (it != free_blocks_.end() && it->first <= 2 * size) {
    block_size = it->first;
    ptr = it->second;
    free_blocks_.erase(it);
  } else {
    ptr = carve(size);
  }
  live_[ptr] = Block{block_size, purpose};
  in_use_[static_cast<int>(purpose)] += block_size;
  return ptr;
}

void DeviceArena::release(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) fail("CudaBackend::free: pointer {} was not allocated by this backend", ptr);
  in_use_[static_cast<int>(it->second.purpose)] -= it->second.size;
  free_blocks_.emplace(it->second.size, ptr);
  live_.erase(it);
}

size_t DeviceArena::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reserved_;
}

size_t DeviceArena::in_use_bytes(MemoryPurpose purpose) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_[static_cast<int>(purpose)];
}

}  // namespace lathe::cuda
