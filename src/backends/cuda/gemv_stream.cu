// The default decode GEMV kernel: a persistent, byte-balanced weight stream through a
// shared-memory ring filled by the bulk-copy engine (cp.async.bulk, completion on mbarriers).
//
// Work decomposition. The weight is cut into units of one 128-row block x one 128-k step, in
// row-block-major order (unit u = block * ksteps + step). A fixed grid of G CTAs (G = 132 by
// default, a constant) takes contiguous ranges of ceil(total / G) units each, so every CTA
// streams the same number of bytes whatever the shape (no partial last wave). A range may start
// or end inside a row block: such a block's K is then split into segments, one per CTA touching
// it, in K order.
//
// Bit identity. Within a segment each row's sum runs over the steps in K order exactly as in the
// register-ring kernel (gemv_common.cuh); segments of a block are summed in CTA order by the
// last CTA to finish one (an arrival counter, reset by that CTA), so the split and the order are
// functions of (n, k, G) only, never of m or of the tier.
//
// CTA: 8 consumer warps (16 rows each) + 1 producer warp. Stage s of the ring holds 256 bytes of
// every one of the block's 128 weight rows (fp8: 2 steps, bf16: 1 step) and the matching m rows
// of x; the producer's lanes issue one bulk copy per row (plus one per x row) and lane 0 arms
// the stage's full barrier with the byte count; consumers wait on it, compute, and arrive on the
// stage's empty barrier. Row pitches are padded (fp8 +64 B, bf16 +16 B, x +16 B) so the 16-byte
// shared loads of a quarter-warp touch distinct banks.
#include <cuda_bf16.h>

#include <algorithm>

#include "backends/cuda/check.h"
#include "backends/cuda/gemv_stream.cuh"

namespace lathe::cuda::gemv_detail {
namespace {

constexpr int kConsumerWarps = kStreamRows / 16;
constexpr int kConsumerThreads = kConsumerWarps * 32;
constexpr int kStreamThreads = kConsumerThreads + 32;
constexpr int kSlotFloats = kStreamRows * 16;  // one partial slot: [16 columns][128 rows]
constexpr size_t kSmemBudget = 220 * 1024;     // of 227 KB per SM on sm_90

// kRowBytes: bytes of every weight row per stage (256: fp8 2 steps, bf16 1; 512: twice that).
template <int kMaxM, bool kFp8, int kRowBytes>
struct Layout {
  static constexpr int kStepBytes = kFp8 ? 128 : 256;  // one weight row, one 128-k step
  static constexpr int kStageSteps = kRowBytes / kStepBytes;
  static constexpr int kWPitch = kRowBytes + (kFp8 ? 64 : 16);
  static constexpr int kXPitch = kStageSteps * 256 + 16;
  static constexpr int kXOffset = kStreamRows * kWPitch;
  static constexpr int kStageBytes = kXOffset + kMaxM * kXPitch;
  static_assert(kStageBytes % 16 == 0, "bulk copies need 16-byte aligned destinations");
};

__device__ __forceinline__ uint32_t smem_u32(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void bulk_copy(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}

__device__ __forceinline__ void consumer_sync() { asm volatile("bar.sync 1, %0;" ::"n"(kConsumerThreads) : "memory"); }

// The stage starting at unit f of a range ending at `end`: its row block, first step and step
// count (never crossing a row block or the range end).
struct Span {
  int64_t block;
  int step;
  int count;
};

__device__ __forceinline__ Span span_at(int64_t f, int64_t end, int64_t ksteps, int stage_steps) {
  Span sp;
  sp.block = f / ksteps;
  sp.step = static_cast<int>(f - sp.block * ksteps);
  sp.count = static_cast<int>(min(static_cast<int64_t>(stage_steps), min(ksteps - sp.step, end - f)));
  return sp;
}

template <int kMaxM, bool kFp8, int kStages, int kRowBytes>
__global__ void __launch_bounds__(kStreamThreads, 1) gemv_stream_kernel(const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // bulk copies and mbarrier transaction counts need sm_90; the launcher never picks this
#else
  using L = Layout<kMaxM, kFp8, kRowBytes>;
  constexpr int kColGroups = kMaxM > 8 ? 2 : 1;
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t full_bar[kStages];
  __shared__ __align__(8) uint64_t empty_bar[kStages];
  __shared__ int last_arrival;

  const int64_t ks = p.ksteps;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * p.cta_units;
  const int64_t end = min(begin + p.cta_units, p.total_units);
  if (begin >= end) return;  // whole CTA, before any barrier

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full_bar[s], 1);
      mbar_init(&empty_bar[s], kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int m = p.m;

  if (warp == kConsumerWarps) {
    // Producer warp.
    const int64_t row_bytes = static_cast<int64_t>(p.k) * (kFp8 ? 1 : 2);
    int j = 0;
    for (int64_t f = begin; f < end; ++j) {
      const Span sp = span_at(f, end, ks, L::kStageSteps);
      const int slot = j % kStages;
      if (j >= kStages) mbar_wait(&empty_bar[slot], static_cast<uint32_t>((j / kStages - 1) & 1));
      uint8_t* stage = smem + slot * L::kStageBytes;
      const uint32_t w_bytes = static_cast<uint32_t>(sp.count * L::kStepBytes);
      const uint32_t x_bytes = static_cast<uint32_t>(sp.count * 256);
      if (lane == 0) mbar_expect_tx(&full_bar[slot], w_bytes * kStreamRows + x_bytes * static_cast<uint32_t>(m));
      __syncwarp();
      const int64_t row_base = sp.block * kStreamRows;
#pragma unroll
      for (int r = lane; r < kStreamRows; r += 32) {
        const int64_t row = min(row_base + r, static_cast<int64_t>(p.n - 1));  // ragged n: repeat the last row
        bulk_copy(stage + r * L::kWPitch, p.w + row * row_bytes + static_cast<int64_t>(sp.step) * L::kStepBytes, w_bytes,
                  &full_bar[slot]);
      }
      if (lane < m) {
        bulk_copy(stage + L::kXOffset + lane * L::kXPitch, p.x + lane * p.x_stride + static_cast<int64_t>(sp.step) * 128,
                  x_bytes, &full_bar[slot]);
      }
      f += sp.count;
    }
    return;
  }

  // Consumer warps: warp w owns rows [w * 16, w * 16 + 16) of the current block.
  const int g = lane >> 2;
  const int c = lane & 3;
  const bool block_scale = p.scale_kind == static_cast<int>(GemvScale::kBlock128);
  const int64_t first_block = begin / ks;

  float acc[kColGroups][4];
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) acc[cg][0] = acc[cg][1] = acc[cg][2] = acc[cg][3] = 0.0f;

  int j = 0;
  for (int64_t f = begin; f < end; ++j) {
    const Span sp = span_at(f, end, ks, L::kStageSteps);
    const int slot = j % kStages;
    mbar_wait(&full_bar[slot], static_cast<uint32_t>((j / kStages) & 1));
    const uint8_t* stage = smem + slot * L::kStageBytes;
    const uint8_t* w_lo = stage + (warp * 16 + g) * L::kWPitch;
    const uint8_t* w_hi = w_lo + 8 * L::kWPitch;
#pragma unroll
    for (int t = 0; t < L::kStageSteps; ++t) {
      if (t < sp.count) {
        float part[kColGroups][4];
#pragma unroll
        for (int cg = 0; cg < kColGroups; ++cg) part[cg][0] = part[cg][1] = part[cg][2] = part[cg][3] = 0.0f;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint4 wv[kFp8 ? 2 : 4];
          if constexpr (kFp8) {
            const int off = t * 128 + h * 64 + c * 16;
            wv[0] = *reinterpret_cast<const uint4*>(w_lo + off);
            wv[1] = *reinterpret_cast<const uint4*>(w_hi + off);
          } else {
            const int off = t * 256 + h * 128 + c * 32;
            wv[0] = *reinterpret_cast<const uint4*>(w_lo + off);
            wv[1] = *reinterpret_cast<const uint4*>(w_lo + off + 16);
            wv[2] = *reinterpret_cast<const uint4*>(w_hi + off);
            wv[3] = *reinterpret_cast<const uint4*>(w_hi + off + 16);
          }
          uint4 xv[kColGroups][2];
#pragma unroll
          for (int cg = 0; cg < kColGroups; ++cg) {
            const int col = cg * 8 + g;
            if (col < m) {
              const uint8_t* src = stage + L::kXOffset + col * L::kXPitch + (t * 128 + h * 64 + c * 16) * 2;
              xv[cg][0] = *reinterpret_cast<const uint4*>(src);
              xv[cg][1] = *reinterpret_cast<const uint4*>(src + 16);
            } else {
              xv[cg][0] = make_uint4(0, 0, 0, 0);
              xv[cg][1] = make_uint4(0, 0, 0, 0);
            }
          }
          gemv_half<kColGroups, kFp8, false>(part, wv, xv);
        }
        const float sc = block_scale ? __ldg(p.scale + sp.block * ks + sp.step + t) : 1.0f;
        accumulate_step<kColGroups>(acc, part, sc);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty_bar[slot]);
    f += sp.count;

    const int64_t block_begin = sp.block * ks;
    const int64_t block_end = block_begin + ks;
    if (f != end && f != block_end) continue;

    // This CTA's segment of sp.block ends here. acc[cg][i]: row (warp*16 + g + (i >= 2 ? 8 : 0))
    // of the block, column cg*8 + 2c + (i & 1).
    const int row_base = static_cast<int>(sp.block) * kStreamRows;
    if (begin <= block_begin && end >= block_end) {
#pragma unroll
      for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = row_base + warp * 16 + g + (i >= 2 ? 8 : 0);
          const int col = cg * 8 + 2 * c + (i & 1);
          if (row < p.n && col < m) store_output(p, row, col, acc[cg][i]);
        }
      }
    } else {
      // Slot 0 holds the partial of this CTA's first block, slot 1 that of its last.
      const int my_slot = sp.block == first_block ? 0 : 1;
      float* slot_ptr = p.partials + (static_cast<int64_t>(blockIdx.x) * 2 + my_slot) * kSlotFloats;
#pragma unroll
      for (int cg = 0; cg < kColGroups; ++cg) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int rl = warp * 16 + g + (i >= 2 ? 8 : 0);
          const int col = cg * 8 + 2 * c + (i & 1);
          if (col < m) __stcg(slot_ptr + col * kStreamRows + rl, acc[cg][i]);
        }
      }
      __threadfence();
      consumer_sync();
      const int64_t cta_first = block_begin / p.cta_units;
      const int64_t cta_last = (block_end - 1) / p.cta_units;
      if (threadIdx.x == 0) last_arrival = atomicAdd(p.counters + cta_first, 1) == static_cast<int>(cta_last - cta_first);
      consumer_sync();
      if (last_arrival) {
        __threadfence();
        // The last CTA of the block sums its segments in CTA (= K) order.
        for (int i = threadIdx.x; i < kStreamRows * m; i += kConsumerThreads) {
          const int rl = i % kStreamRows;
          const int col = i / kStreamRows;
          const int row = row_base + rl;
          if (row >= p.n) continue;
          float sum = 0.0f;
          for (int64_t cta = cta_first; cta <= cta_last; ++cta) {
            const int s = (cta * p.cta_units) / ks == sp.block ? 0 : 1;
            const float v = __ldcg(p.partials + (cta * 2 + s) * kSlotFloats + col * kStreamRows + rl);
            sum = cta == cta_first ? v : __fadd_rn(sum, v);
          }
          store_output(p, row, col, sum);
        }
        if (threadIdx.x == 0) p.counters[cta_first] = 0;
      }
    }
#pragma unroll
    for (int cg = 0; cg < kColGroups; ++cg) acc[cg][0] = acc[cg][1] = acc[cg][2] = acc[cg][3] = 0.0f;
  }
#endif
}

template <int kMaxM, bool kFp8, int kStages, int kRowBytes>
void launch_one(const Params& params, unsigned grid, cudaStream_t stream) {
  constexpr size_t smem = static_cast<size_t>(kStages) * Layout<kMaxM, kFp8, kRowBytes>::kStageBytes;
  static_assert(smem <= kSmemBudget, "stream ring exceeds shared memory");
  auto* kernel = gemv_stream_kernel<kMaxM, kFp8, kStages, kRowBytes>;
  // Once per instantiation (not a stream operation; legal during graph capture).
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  LATHE_CUDA_CHECK(attr);
  kernel<<<grid, kStreamThreads, smem, stream>>>(params);
  LATHE_CUDA_CHECK_LAUNCH();
}

template <int kMaxM, bool kFp8>
constexpr int max_stages(int row_bytes) {
  return static_cast<int>(kSmemBudget / (row_bytes == 512 ? Layout<kMaxM, kFp8, 512>::kStageBytes
                                                          : Layout<kMaxM, kFp8, 256>::kStageBytes));
}

template <int kMaxM, bool kFp8>
void launch_stages(const Params& params, unsigned grid, int stages, int row_bytes, cudaStream_t stream) {
  if (row_bytes == 512) {
    static_assert(max_stages<kMaxM, kFp8>(512) >= 2);
    launch_one<kMaxM, kFp8, 2, 512>(params, grid, stream);
    return;
  }
  constexpr int kMax = max_stages<kMaxM, kFp8>(256);
  static_assert(kMax >= 4);
  switch (std::min(stages, kMax)) {
    case 2:
      launch_one<kMaxM, kFp8, 2, 256>(params, grid, stream);
      break;
    case 3:
      launch_one<kMaxM, kFp8, 3, 256>(params, grid, stream);
      break;
    case 4:
      launch_one<kMaxM, kFp8, 4, 256>(params, grid, stream);
      break;
    default:
      if constexpr (kMax >= 5) {
        launch_one<kMaxM, kFp8, 5, 256>(params, grid, stream);
      } else {
        launch_one<kMaxM, kFp8, 4, 256>(params, grid, stream);
      }
      break;
  }
}

}  // namespace

int64_t stream_cta_units(int64_t n, int64_t k, int ctas) {
  const int64_t blocks = (n + kStreamRows - 1) / kStreamRows;
  const int64_t total = blocks * std::max<int64_t>(1, k / 128);
  return (total + ctas - 1) / ctas;
}

int64_t stream_grid(int64_t n, int64_t k, int ctas) {
  const int64_t blocks = (n + kStreamRows - 1) / kStreamRows;
  const int64_t total = blocks * std::max<int64_t>(1, k / 128);
  const int64_t per = stream_cta_units(n, k, ctas);
  return (total + per - 1) / per;
}

int stream_default_stages(int tier, bool fp8) {
  const int most = tier == 1   ? (fp8 ? max_stages<1, true>(256) : max_stages<1, false>(256))
                   : tier == 4 ? (fp8 ? max_stages<4, true>(256) : max_stages<4, false>(256))
                               : (fp8 ? max_stages<16, true>(256) : max_stages<16, false>(256));
  return std::min(most, 5);
}

size_t stream_partial_floats(int ctas) { return static_cast<size_t>(ctas) * 2 * kSlotFloats; }

void launch_stream(int tier, Params params, bool fp8, int stages, int ctas, int row_bytes, cudaStream_t stream) {
  params.ksteps = params.k / 128;
  params.total_units = ((params.n + kStreamRows - 1) / kStreamRows) * params.ksteps;
  params.cta_units = stream_cta_units(params.n, params.k, ctas);
  const unsigned grid = static_cast<unsigned>(stream_grid(params.n, params.k, ctas));
  switch (tier) {
    case 1:
      fp8 ? launch_stages<1, true>(params, grid, stages, row_bytes, stream) : launch_stages<1, false>(params, grid, stages, row_bytes, stream);
      break;
    case 4:
      fp8 ? launch_stages<4, true>(params, grid, stages, row_bytes, stream) : launch_stages<4, false>(params, grid, stages, row_bytes, stream);
      break;
    default:
      fp8 ? launch_stages<16, true>(params, grid, stages, row_bytes, stream) : launch_stages<16, false>(params, grid, stages, row_bytes, stream);
      break;
  }
}

}  // namespace lathe::cuda::gemv_detail
