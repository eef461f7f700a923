#pragma once
// Measurement support shared by the kernel benchmark and the GPU tests: a 16-byte-load read
// kernel (the device's read ceiling) and device-side random fills (benchmarks never time
// zeros: they hide unwritten outputs and can run faster than real data).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace lathe::cuda {

// Reads `bytes` (a multiple of 16) with 16-byte loads, several in flight per thread; writes a
// value to *sink only when an impossible checksum appears (keeps the loads alive).
void read_probe(const void* data, size_t bytes, unsigned* sink, cudaStream_t stream);

enum class FillKind { kFp8E4M3, kBf16Unit, kF32Unit };
// Fills `count` elements from a counter-based hash of (seed, index): fp8 codes that are finite
// (never the NaN codes), or bf16/f32 uniform in [-1, 1).
void fill_random(void* data, size_t count, FillKind kind, uint64_t seed, cudaStream_t stream);

// How many CTAs of `threads_per_cta` threads and `dynamic_smem_bytes` of dynamic shared memory the
// driver's occupancy calculator puts on one SM for a kernel with no other limit (few registers, no
// static shared memory): what a shared-memory request alone allows (wave_fill.h). Throws
// lathe::Error when the query fails (e.g. more than the opt-in limit).
int probe_resident_ctas(int threads_per_cta, int dynamic_smem_bytes);

}  // namespace lathe::cuda
