// Decode GEMV variant (GemvKernel::kStream): a persistent, byte-balanced weight stream
// through a shared-memory ring filled by the bulk-copy engine (cp.async.bulk, completion on
// mbarriers). Measured on the H200 (2026-11-30, % of the read ceiling on the large fp8 shapes
// at m = 1): one 256-byte copy per row from a single producer warp 19-20% on every shape
// (copy-issue bound: ring depth made no difference); per-warp copies 42-54%; 512-byte rows
// 50-75%; one 2-D tensor copy per warp and stage (:tma) 51-80% (bf16: 72-93%, the best bf16
// kernel on large shapes). bench/results/gemv_variants_2026-11-30.txt has every shape and m.
// Two or three CTAs per SM (:tma:b2, :tma:b3; 16 or 24 compute warps) gained up to 11 points on
// the large fp8 shapes at m = 1 and stayed under the register ring (bench/results/
// gemv_stream_tma_ctas_2026-11-30l/).
// The register ring stays the default for decoder-layer weights (gemv.cu); since session 39 `auto`
// takes `stream:b2:tma` (tensor copies without L2 promotion) for bf16 weights of vocabulary width
// (gemv_policy.h, kStreamTmaMinBlocks): 97-98% of the read ceiling on the Qwen3 lm_heads at m = 1.
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
// CTA: 8 compute warps (16 rows each) + 1 activation warp. Stage s of the ring holds kRowBytes
// of every one of the block's 128 weight rows (256: fp8 2 steps, bf16 1 step) and the matching
// m rows of x. Each compute warp streams ITS OWN 16 rows: lanes 0..15 issue one bulk copy each
// into the slot it has just consumed, completing on the warp's own barrier, so no warp waits
// for another to refill weights (a single copy-issuing warp per CTA measured ~20% of the read
// ceiling on the H200: the per-copy issue cost, not bytes in flight, was the limit). The
// activation warp copies x into each slot once all compute warps have released it. Row pitches
// are padded (fp8 +64 B, bf16 +16 B, x +16 B) so the 16-byte shared loads of a quarter-warp
// touch distinct banks.
#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <string>

#include "backends/cuda/bulk_copy.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/gemv_stream.cuh"
#include "backends/cuda/tensor_map.h"

namespace lathe::cuda::gemv_detail {
namespace {

constexpr int kConsumerWarps = kStreamRows / 16;
constexpr int kConsumerThreads = kConsumerWarps * 32;
constexpr int kStreamThreads = kConsumerThreads + 32;
constexpr size_t kSmemBudget = 220 * 1024;  // of 227 KB per SM on sm_90
// Shared memory of one CTA when `ctas` share an SM (`:b2`, `:b3`, tensor copies only): the SM's
// 228 KB less 1 KB reserved per CTA, split evenly, less 1 KB for the static barriers; so 16 or 24
// compute warps share the SM's issue slots and copies.
constexpr size_t smem_budget(int ctas) { return ctas == 1 ? kSmemBudget : (228 - ctas) * 1024 / ctas - 1024; }

// kRowBytes: bytes of every weight row per stage (256: fp8 2 steps, bf16 1; 512: twice that).
// kTma: weights arrive as one 2-D tensor copy per warp (16 rows x 256 bytes, dense rows: the
// tensor box fixes the pitch, so the 16-byte reads of a quarter-warp see 2-way bank conflicts).
template <int kMaxM, bool kFp8, int kRowBytes, bool kTma = false>
struct Layout {
  static constexpr int kStepBytes = kFp8 ? 128 : 256;  // one weight row, one 128-k step
  static constexpr int kStageSteps = kRowBytes / kStepBytes;
  static constexpr int kWPitch = kTma ? kRowBytes : kRowBytes + (kFp8 ? 64 : 16);
  static constexpr int kXPitch = kStageSteps * 256 + 16;
  static constexpr int kXOffset = kStreamRows * kWPitch;
  static constexpr int kStageBytes =
      (kXOffset + kMaxM * kXPitch + 127) / 128 * 128;  // tensor copies: 128-B aligned
  static_assert(kStageBytes % 16 == 0, "bulk copies need 16-byte aligned destinations");
};

using bulk::bulk_copy;
using bulk::mbar_arrive;
using bulk::mbar_expect_tx;
using bulk::mbar_init;
using bulk::mbar_wait;
using bulk::smem_u32;
using bulk::tensor_copy_2d;

// Walks a CTA's unit range stage by stage: each stage covers up to `stage_steps` steps of one
// row block, never crossing a block or the range end (one division at the start only). (Unused
// below sm_90, where the kernel traps.)
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
struct Cursor {
  int64_t f;      // next unit
  int64_t block;  // its row block
  int step;       // its step within the block
  int count;      // steps in the stage starting at f

  __device__ __forceinline__ void start(int64_t unit, int64_t end, int64_t ksteps, int stage_steps) {
    f = unit;
    block = unit / ksteps;
    step = static_cast<int>(unit - block * ksteps);
    fit(end, ksteps, stage_steps);
  }
  __device__ __forceinline__ void fit(int64_t end, int64_t ksteps, int stage_steps) {
    count = static_cast<int>(min(static_cast<int64_t>(stage_steps), min(ksteps - step, end - f)));
  }
  __device__ __forceinline__ void next(int64_t end, int64_t ksteps, int stage_steps) {
    f += count;
    step += count;
    if (step == ksteps) {
      step = 0;
      ++block;
    }
    if (f < end) fit(end, ksteps, stage_steps);
  }
};
#endif

template <int kMaxM, bool kFp8, int kStages, int kRowBytes, bool kTma, int kMinCtas = 1>
__global__ void __launch_bounds__(kStreamThreads, kMinCtas)
    gemv_stream_kernel(const __grid_constant__ Params p, const __grid_constant__ CUtensorMap w_map) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // bulk copies and mbarrier transaction counts need sm_90; the launcher never picks this
#else
  using L = Layout<kMaxM, kFp8, kRowBytes, kTma>;
  constexpr int kColGroups = (kMaxM + 7) / 8;  // 1 (tiers 1, 4), 2 (16), 4 (32)
  extern __shared__ __align__(128) uint8_t smem[];
  __shared__ __align__(8) uint64_t w_full[kStages][kConsumerWarps];  // one warp's rows landed
  __shared__ __align__(8) uint64_t x_full[kStages];                  // x landed
  __shared__ __align__(8) uint64_t x_empty[kStages];                 // every compute warp done with the slot
  __shared__ int last_arrival;

  const int64_t ks = p.ksteps;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * p.cta_units;
  const int64_t end = min(begin + p.cta_units, p.total_units);
  if (begin >= end) return;  // whole CTA, before any barrier

  if (threadIdx.x == 0) {
#pragma unroll
    for (int s = 0; s < kStages; ++s) {
#pragma unroll
      for (int w = 0; w < kConsumerWarps; ++w) mbar_init(&w_full[s][w], 1);
      mbar_init(&x_full[s], 1);
      mbar_init(&x_empty[s], kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int m = p.m;

  if (warp == kConsumerWarps) {
    // Activation warp: x rows [0, m) of each stage's steps.
    Cursor sp;
    sp.start(begin, end, ks, L::kStageSteps);
    for (int j = 0; sp.f < end; ++j, sp.next(end, ks, L::kStageSteps)) {
      const int slot = j % kStages;
      if (j >= kStages) mbar_wait(&x_empty[slot], static_cast<uint32_t>((j / kStages - 1) & 1));
      const uint32_t x_bytes = static_cast<uint32_t>(sp.count * 256);
      if (lane == 0) mbar_expect_tx(&x_full[slot], x_bytes * static_cast<uint32_t>(m));
      __syncwarp();
      if (lane < m) {
        bulk_copy(smem + slot * L::kStageBytes + L::kXOffset + lane * L::kXPitch,
                  p.x + lane * p.x_stride + static_cast<int64_t>(sp.step) * 128, x_bytes, &x_full[slot]);
      }
    }
    return;
  }

  // Compute warps: warp w owns rows [w * 16, w * 16 + 16) of the current block.
  const int g = lane >> 2;
  const int c = lane & 3;
  const bool block_scale = p.scale_kind == static_cast<int>(GemvScale::kBlock128);
  const int64_t row_bytes = static_cast<int64_t>(p.k) * (kFp8 ? 1 : 2);

  // Issues this warp's 16 weight rows of the stage `sp` into `slot`.
  auto issue_rows = [&](int slot, const Cursor& sp) {
    if constexpr (kTma) {
      // One box: k elements [step * 128, + 256 bytes), rows [block * 128 + warp * 16, + 16).
      // Rows past n and k past the end arrive as zeros; the box always counts in full.
      if (lane == 0) {
        mbar_expect_tx(&w_full[slot][warp], 16 * kRowBytes);
        tensor_copy_2d(smem + slot * L::kStageBytes + warp * 16 * L::kWPitch, &w_map, sp.step * 128,
                       static_cast<int>(sp.block) * kStreamRows + warp * 16, &w_full[slot][warp]);
      }
      return;
    }
    const uint32_t w_bytes = static_cast<uint32_t>(sp.count * L::kStepBytes);
    if (lane == 0) mbar_expect_tx(&w_full[slot][warp], w_bytes * 16);
    __syncwarp();
    if (lane < 16) {
      const int r = warp * 16 + lane;
      const int64_t row =
          min(sp.block * kStreamRows + r, static_cast<int64_t>(p.n - 1));  // ragged n: repeat the last row
      bulk_copy(smem + slot * L::kStageBytes + r * L::kWPitch,
                p.w + row * row_bytes + static_cast<int64_t>(sp.step) * L::kStepBytes, w_bytes,
                &w_full[slot][warp]);
    }
  };
  Cursor ahead;
  ahead.start(begin, end, ks, L::kStageSteps);
#pragma unroll 1
  for (int jj = 0; jj < kStages && ahead.f < end; ++jj, ahead.next(end, ks, L::kStageSteps))
    issue_rows(jj, ahead);

  float acc[kColGroups][4];
#pragma unroll
  for (int cg = 0; cg < kColGroups; ++cg) acc[cg][0] = acc[cg][1] = acc[cg][2] = acc[cg][3] = 0.0f;

  Cursor sp;
  sp.start(begin, end, ks, L::kStageSteps);
  for (int j = 0; sp.f < end; ++j, sp.next(end, ks, L::kStageSteps)) {
    const int slot = j % kStages;
    const uint32_t parity = static_cast<uint32_t>((j / kStages) & 1);
    mbar_wait(&w_full[slot][warp], parity);
    mbar_wait(&x_full[slot], parity);
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
          load_x_half<kColGroups, kFp8>(xv, stage + L::kXOffset + (t * 128 + h * 64) * 2, L::kXPitch, m);
          gemv_half<kColGroups, kFp8, false>(part, wv, xv);
        }
        const float sc = block_scale ? __ldg(p.scale + sp.block * ks + sp.step + t) : 1.0f;
        accumulate_step<kColGroups>(acc, part, sc);
      }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&x_empty[slot]);
    if (ahead.f < end) {  // refill this warp's rows of the slot just read
      issue_rows(slot, ahead);
      ahead.next(end, ks, L::kStageSteps);
    }

    const int64_t f_after = sp.f + sp.count;
    if (f_after != end && f_after != (sp.block + 1) * ks) continue;

    flush_segment<kColGroups, kConsumerThreads>(p, acc, sp.block, begin, end, warp, lane, &last_arrival);
#pragma unroll
    for (int cg = 0; cg < kColGroups; ++cg) acc[cg][0] = acc[cg][1] = acc[cg][2] = acc[cg][3] = 0.0f;
  }
#endif
}

template <int kMaxM, bool kFp8, int kStages, int kRowBytes, bool kTma, int kMinCtas = 1>
void launch_one(const Params& params, const CUtensorMap& map, unsigned grid, cudaStream_t stream) {
  constexpr size_t smem = static_cast<size_t>(kStages) * Layout<kMaxM, kFp8, kRowBytes, kTma>::kStageBytes;
  static_assert(smem <= smem_budget(kMinCtas), "stream ring exceeds shared memory");
  auto* kernel = gemv_stream_kernel<kMaxM, kFp8, kStages, kRowBytes, kTma, kMinCtas>;
  // Once per instantiation (not a stream operation; legal during graph capture).
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  LATHE_CUDA_CHECK(attr);
  kernel<<<grid, kStreamThreads, smem, stream>>>(params, map);
  LATHE_CUDA_CHECK_LAUNCH();
}

template <int kMaxM, bool kFp8>
constexpr int max_stages(int row_bytes) {
  return static_cast<int>(kSmemBudget / (row_bytes == 512 ? Layout<kMaxM, kFp8, 512>::kStageBytes
                                                          : Layout<kMaxM, kFp8, 256>::kStageBytes));
}

// Tensor copies: dense rows, the deepest ring (at most 5 stages) that fits kCtas CTAs per SM; where
// fewer than two stages would fit (the 16- and 32-row tiers at three per SM), the ring of one CTA
// fewer per SM (the grid, and so every row's bytes, stay those of the variant).
template <int kMaxM, bool kFp8, int kCtas>
void launch_tma(const Params& params, const CUtensorMap& map, unsigned grid, cudaStream_t stream) {
  constexpr int kFit = static_cast<int>(smem_budget(kCtas) / Layout<kMaxM, kFp8, 256, true>::kStageBytes);
  if constexpr (kFit < 2 && kCtas > 1) {
    launch_tma<kMaxM, kFp8, kCtas - 1>(params, map, grid, stream);
  } else {
    static_assert(kFit >= 2, "two stages per CTA");
    launch_one<kMaxM, kFp8, std::min(5, kFit), 256, true, kCtas>(params, map, grid, stream);
  }
}

template <int kMaxM, bool kFp8>
void launch_stages(const Params& params, const CUtensorMap* map, unsigned grid, int stages, int row_bytes,
                   int ctas_per_sm, cudaStream_t stream) {
  if (map != nullptr) {
    if (ctas_per_sm == 3) {
      launch_tma<kMaxM, kFp8, 3>(params, *map, grid, stream);
    } else if (ctas_per_sm == 2) {
      launch_tma<kMaxM, kFp8, 2>(params, *map, grid, stream);
    } else {
      launch_tma<kMaxM, kFp8, 1>(params, *map, grid, stream);
    }
    return;
  }
  const CUtensorMap none{};
  if (row_bytes == 512) {
    static_assert(max_stages<kMaxM, kFp8>(512) >= 2);
    launch_one<kMaxM, kFp8, 2, 512, false>(params, none, grid, stream);
    return;
  }
  // Three stages fit every tier (fp8 at 32 rows: 3), four or five the narrower ones; other
  // requests take the deepest ring that fits, at most 5.
  constexpr int kMax = max_stages<kMaxM, kFp8>(256);
  static_assert(kMax >= 3);
  constexpr int kDeepest = std::min(kMax, 5);
  switch (std::min(stages, kMax)) {
    case 2:
      launch_one<kMaxM, kFp8, 2, 256, false>(params, none, grid, stream);
      break;
    case 3:
      launch_one<kMaxM, kFp8, 3, 256, false>(params, none, grid, stream);
      break;
    case 4:
      if constexpr (kMax >= 4) launch_one<kMaxM, kFp8, 4, 256, false>(params, none, grid, stream);
      break;
    default:
      launch_one<kMaxM, kFp8, kDeepest, 256, false>(params, none, grid, stream);
      break;
  }
}

// None by default: without promotion session 39 measured the `:tma` variants at 0.945-1.031 x the
// time on the Qwen3-8B/32B shapes at m = 1 and 16 (the large bf16 ones 3-5.5% faster; one round),
// the split-K attention's copies 4-9% faster in session 38.
L2PromotionSetting g_tma_l2_promotion{0};

// Weight [n, k] as a 2-D tensor of boxes 16 rows x 256 bytes.
CUtensorMap weight_map(const Params& params, bool fp8) {
  TensorMapSpec spec;
  spec.l2_promotion = l2_promotion_of(g_tma_l2_promotion.get());
  spec.dtype = fp8 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  spec.rank = 2;
  spec.base = params.w;
  spec.dims[0] = static_cast<uint64_t>(params.k);
  spec.dims[1] = static_cast<uint64_t>(params.n);
  spec.strides[0] = static_cast<uint64_t>(params.k) * (fp8 ? 1 : 2);
  spec.box[0] = fp8 ? 256u : 128u;
  spec.box[1] = 16u;
  CUtensorMap map{};
  int error = 0;
  if (!encode_tensor_map(spec, map, error)) {
    throw_error(error < 0 ? std::string("gemv: cuTensorMapEncodeTiled is not available from the driver")
                          : "gemv: cuTensorMapEncodeTiled failed with CUresult " + std::to_string(error));
  }
  return map;
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
  const int most = tier == 1    ? (fp8 ? max_stages<1, true>(256) : max_stages<1, false>(256))
                   : tier == 4  ? (fp8 ? max_stages<4, true>(256) : max_stages<4, false>(256))
                   : tier == 16 ? (fp8 ? max_stages<16, true>(256) : max_stages<16, false>(256))
                                : (fp8 ? max_stages<32, true>(256) : max_stages<32, false>(256));
  return std::min(most, 5);
}

size_t stream_partial_floats(int ctas) {
  return static_cast<size_t>(ctas) * 2 * kSlotFloats;
}

void launch_stream(int tier, Params params, bool fp8, int stages, int ctas, int row_bytes, bool tma, int ctas_per_sm,
                   cudaStream_t stream) {
  params.ksteps = params.k / 128;
  params.total_units = ((params.n + kStreamRows - 1) / kStreamRows) * params.ksteps;
  params.cta_units = stream_cta_units(params.n, params.k, ctas);
  const unsigned grid = static_cast<unsigned>(stream_grid(params.n, params.k, ctas));
  CUtensorMap map{};
  if (tma) map = weight_map(params, fp8);
  const CUtensorMap* map_ptr = tma ? &map : nullptr;
  switch (tier) {
    case 1:
      fp8 ? launch_stages<1, true>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream)
          : launch_stages<1, false>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream);
      break;
    case 4:
      fp8 ? launch_stages<4, true>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream)
          : launch_stages<4, false>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream);
      break;
    case 16:
      fp8 ? launch_stages<16, true>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream)
          : launch_stages<16, false>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream);
      break;
    default:  // 32: x of 32 rows a stage, 32-column segment slots (flush_segment)
      fp8 ? launch_stages<32, true>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream)
          : launch_stages<32, false>(params, map_ptr, grid, stages, row_bytes, ctas_per_sm, stream);
      break;
  }
}

}  // namespace lathe::cuda::gemv_detail

namespace lathe::cuda {

bool set_gemv_tma_l2_promotion(int promotion_bytes) {
  return gemv_detail::g_tma_l2_promotion.set(promotion_bytes);
}
int gemv_tma_l2_promotion() {
  return gemv_detail::g_tma_l2_promotion.get();
}

}  // namespace lathe::cuda
