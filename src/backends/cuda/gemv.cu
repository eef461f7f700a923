// The decode GEMV tiers (see gemv.h for the contract and the bit-identity argument): the
// launcher and the register-ring kernel (with kBalanced, the ringbal variant). The per-shape
// choice between them (gemv_auto_variant), the K splits and the variant names are in
// gemv_policy.cpp; the bulk-copy stream variants in gemv_stream.cu; the split-K scratch's layout in
// gemv_workspace.cpp.
//
// The register-ring kernel itself, and how it splits the work, are in gemv_ring_kernel.cuh; its
// launchers in gemv_ring_launch.cuh (one translation unit per tier: gemv_ring_tier*.cu).
#include <cuda_bf16.h>

#include <algorithm>

#include "backends/cuda/chained_launch.cuh"
#include "backends/cuda/check.h"
#include "backends/cuda/device.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_policy.h"
#include "backends/cuda/gemv_ring_launch.cuh"
#include "backends/cuda/gemv_stream.cuh"
#include "backends/cuda/tensor_map.h"

namespace lathe::cuda {
namespace {

using namespace gemv_detail;

__global__ void decode_codes_kernel(uint16_t* out_cvt, uint16_t* out_bits) {
  const uint32_t code = threadIdx.x;  // 256 threads; lanes 0..3 of a word hold code, code, code, code
  const uint32_t codes = code * 0x01010101u;
  uint32_t lo, hi, blo, bhi;
  fp8x4_to_bf16x4(codes, lo, hi);
  fp8x4_to_bf16x4_bits(codes, blo, bhi);
  // All four lanes must agree (checks lane placement of both halves, too).
  const bool same = (lo & 0xffffu) == (lo >> 16) && (lo == hi);
  const bool same_bits = (blo & 0xffffu) == (blo >> 16) && (blo == bhi);
  out_cvt[code] = same ? static_cast<uint16_t>(lo & 0xffffu) : 0xdeadu;
  out_bits[code] = same_bits ? static_cast<uint16_t>(blo & 0xffffu) : 0xdeadu;
}

}  // namespace

int64_t gemv_stream_cta_steps(int64_t n, int64_t k) {
  return stream_cta_units(n, k, kStreamCtas);
}

namespace {

// The stream kernel needs sm_90 (bulk copies, mbarrier transaction counts); older devices take
// the register-ring kernel. Read once per process (one device type per process).
bool device_has_bulk_copy() {
  static const bool has = [] {
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess)
      return false;
    return major >= 9;
  }();
  return has;
}

// Resolves kDefault (gemv_default_variant, per shape) and the hardware fallback (no bulk copies
// below sm_90).
GemvVariant resolve(const GemvVariant& variant, bool fp8, int64_t n, int64_t k) {
  GemvVariant v = gemv_resolve_variant(variant, fp8, n, k);
  if (v.kernel == GemvKernel::kStream && !device_has_bulk_copy()) {
    // The register-ring kernel `auto` would take for a wave of two CTAs per SM.
    const int early = v.early_weights;
    v = auto_variant_for_wave(fp8, n, k, kRingBalancedCtas);
    v.early_weights = early;
  }
  return v;
}

// The register ring's requested K split: v.ksplit, else (v.ctas > 0) as many splits per 128-row
// block as fit the whole grid into v.ctas CTAs (one wave at ctas = 2 per SM), else 0 (the rule).
int ring_split_request(const GemvVariant& v, int64_t n) {
  if (v.ksplit > 0) return v.ksplit;
  if (v.ctas <= 0) return 0;
  const int64_t blocks = (n + kRowsPerCta - 1) / kRowsPerCta;
  return static_cast<int>(std::clamp<int64_t>(v.ctas / blocks, 1, 1 << 16));
}

int balanced_ctas(const GemvVariant& v) {
  if (v.ctas > 0) return v.ctas;
  if (v.kernel == GemvKernel::kStream)
    return v.tma && v.ctas_per_sm >= 2 ? v.ctas_per_sm * kStreamCtas : kStreamCtas;
  return v.ctas_per_sm == 3 ? 3 * kRingWaveSms : kRingBalancedCtas;
}

bool aligned16(const void* ptr) {
  return reinterpret_cast<uintptr_t>(ptr) % 16 == 0;
}

// The fused norm's own requirements (GemvNormInput), after the shape's and x's.
std::string norm_input_reason(int tier, const GemvProblem& p) {
  if (tier != 1 && tier != 4) return "the fused norm is built for tiers 1 and 4";
  if (p.k > norm_row::kNormThreads * norm_row::kVecElems * norm_row::kMaxVecs)
    return "fused norm: k above 8192";
  if (!aligned16(p.norm.weight)) return "fused norm: the norm weight must be 16-byte aligned";
  return {};
}

// The kernels a fused norm runs on: the register ring and its balanced grid, without the bit trick.
std::string norm_variant_reason(const GemvVariant& resolved) {
  if (resolved.kernel == GemvKernel::kStream) return "the fused norm runs on the register-ring kernels only";
  if (resolved.bit_trick) return "the fused norm is not built with ':bits'";
  return {};
}

std::string workspace_reason(int tier, const GemvProblem& p, const GemvWorkspace& ws,
                             const GemvVariant& variant) {
  const GemvVariant v = resolve(variant, p.weight == GemvWeight::kFp8E4M3, p.n, p.k);
  if (p.norm.weight != nullptr) {
    if (std::string why = norm_variant_reason(v); !why.empty()) return why;
  }
  if (v.kernel == GemvKernel::kStream || v.kernel == GemvKernel::kRingBalanced) {
    const int ctas = balanced_ctas(v);
    // The 32-row tier's segment partials take 32-column slots (gemv_common.cuh, slot_floats).
    const size_t slot_scale = tier == 32 ? 2 : 1;
    if (slot_scale * stream_partial_floats(ctas) > ws.partial_floats || ctas > ws.counter_count)
      return "balanced-grid workspace too small";
    return {};
  }
  const int ksplit = gemv_ring_ksplit(p.n, p.k, ring_split_request(v, p.n));
  // The slot sum of tier 4 would never finish on an odd n (gemv_ring_ksplit never splits one).
  if (ksplit > 1 && p.n % 2 != 0) return "K split of an odd row count";
  if (ksplit > 1) {
    // Tiers 16 and 32 sum through the partials (16 or 32 token rows a split) and counters, tiers 1
    // and 4 through the split slots.
    const size_t blocks = static_cast<size_t>((p.n + kRowsPerCta - 1) / kRowsPerCta);
    const size_t partial_cols = tier == 32 ? 32 : 16;
    if (static_cast<size_t>(ksplit) * partial_cols * static_cast<size_t>(p.n) > ws.partial_floats ||
        blocks > static_cast<size_t>(ws.counter_count) ||
        static_cast<size_t>(ksplit) * blocks * 16 * kRowsPerCta > ws.split_slot_count)
      return "split-K workspace too small";
  }
  return {};
}

std::string problem_reason(int tier, const GemvProblem& p) {
  if (tier != 1 && tier != 4 && tier != 16 && tier != 32) return "tier must be 1, 4, 16 or 32";
  if (p.m < 1 || p.m > tier) return "row count outside the tier";
  if (p.n < 1 || p.k < kStepK || p.k % kStepK != 0) return "k must be a positive multiple of 128";
  if (p.n > (int64_t{1} << 30) || p.k > (int64_t{1} << 30)) return "shape too large";
  if (reinterpret_cast<uintptr_t>(p.w) % 16 != 0 || reinterpret_cast<uintptr_t>(p.x) % 16 != 0)
    return "weights and activations must be 16-byte aligned";
  if (p.x_stride % 8 != 0 || p.x_stride < p.k)
    return "activation row stride must be a multiple of 8 and >= k";
  if (p.y_add && p.y_f32) return "y_add takes a bf16 output";
  if (p.norm.weight != nullptr) {
    if (std::string why = norm_input_reason(tier, p); !why.empty()) return why;
  }
  if (p.silu_inter != 0) {
    if (p.silu_inter < 0 || p.silu_inter % 64 != 0 || p.n != 2 * p.silu_inter)
      return "SwiGLU epilogue: n must be 2 * silu_inter with silu_inter a positive multiple of 64";
    if (p.y_f32 || p.y_add) return "SwiGLU epilogue: y is a plain bf16 output";
  }
  if (p.rope != nullptr) {
    const QkNormRopeArgs& r = *p.rope;
    if (p.silu_inter != 0) return "QK-norm/RoPE epilogue: not with the SwiGLU epilogue";
    if (p.y_f32 || p.y_add) return "QK-norm/RoPE epilogue: y is a plain bf16 output";
    if (r.head_dim != kRowsPerCta)
      return "QK-norm/RoPE epilogue: head_dim must be 128 (one head per row block)";
    if (r.num_heads < 1 || r.num_kv_heads < 1 ||
        p.n != int64_t{r.num_heads + 2 * r.num_kv_heads} * r.head_dim)
      return "QK-norm/RoPE epilogue: n must be (num_heads + 2 num_kv_heads) x head_dim";
    if (r.rotary_dim < 0 || r.rotary_dim % 2 != 0 || r.rotary_dim > r.head_dim)
      return "QK-norm/RoPE epilogue: rotary_dim must be even and <= head_dim";
    if (r.positions == nullptr || r.slot_mapping == nullptr || r.cache_k == nullptr || r.cache_v == nullptr ||
        r.block_size < 1 || (r.rotary_dim > 0 && r.inv_freq == nullptr))
      return "QK-norm/RoPE epilogue: positions, slots, cache and inv_freq are required";
  }
  if (p.y_stride < (p.silu_inter != 0 ? p.silu_inter : p.n)) return "output row stride must cover a row of y";
  if (p.weight == GemvWeight::kBf16 && p.scale_kind != GemvScale::kNone) return "bf16 weights take no scale";
  if (p.scale_kind != GemvScale::kNone && p.scale == nullptr) return "missing scale";
  return {};
}

// The register-ring configuration a launch of `resolved` runs here (fused_norm: it normalises x
// itself): without wgmma on this device, ":wg" and ":wgn" run the same sums by mma.sync (the same
// bytes).
RingConfig effective_ring_config(const GemvVariant& resolved, bool fp8, bool fused_norm) {
  RingConfig cfg = ring_config(resolved, fp8, fused_norm);
  if (!device_has_wgmma()) cfg.wgmma = cfg.wgmma_narrow = cfg.x_tensor = false;
  return cfg;
}

// The 16-row tier's x as the tensor map ":xt" copies from (gemv_ring_kernel.cuh): bf16 [m, k] at
// row stride x_stride, boxes of one 64-k half (128 bytes, the swizzle's width) by the tier's 16
// B columns. problem_reason has checked what the copy engine needs (x 16-byte aligned, the row
// stride a multiple of 8 elements); false only when the driver refuses the map, and the launch
// then stages x the ordinary way (the same bytes).
bool encode_x_map(Params& params) {
  const int64_t stride_bytes = params.x_stride * static_cast<int64_t>(sizeof(__nv_bfloat16));
  TensorMapSpec spec;
  spec.dtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  spec.rank = 2;
  spec.base = params.x;
  spec.dims[0] = static_cast<uint64_t>(params.k);
  spec.dims[1] = static_cast<uint64_t>(params.m);
  spec.strides[0] = static_cast<uint64_t>(stride_bytes);
  spec.box[0] = kStepK / 2;
  spec.box[1] = 16;
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  spec.l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  int error = 0;
  return encode_tensor_map(spec, params.x_map, error);
}

// Why the 32-row tier cannot run p's shape under `variant` (empty for the other tiers): it is built
// for the stream kernel and for the register ring on either grid without ':bits', at its own ring
// depth (launch_ring_tier32; the depth changes no arithmetic, so a variant's ':s4' runs as the tier's).
std::string tier_variant_reason(int tier, const GemvProblem& p, const GemvVariant& variant) {
  if (tier != 32) return {};
  const bool fp8 = p.weight == GemvWeight::kFp8E4M3;
  const GemvVariant v = resolve(variant, fp8, p.n, p.k);
  if (v.kernel == GemvKernel::kStream) return {};
  const RingConfig cfg = ring_config(v, fp8);
  if (cfg.bit_trick)
    return std::string("the 32-row tier's ring is built without ':bits'") + " (this shape takes " +
           gemv_variant_name(v) + ")";
  return {};
}

// Why `tier` cannot run p's epilogue (SwiGLU: p.silu_inter > 0; QK-norm/RoPE: p.rope) under
// `variant` on this device; empty when it can (or p has none).
std::string epilogue_reason(int tier, const GemvProblem& p, const GemvVariant& variant) {
  if (p.silu_inter == 0 && p.rope == nullptr) return {};
  const bool fp8 = p.weight == GemvWeight::kFp8E4M3;
  return gemv_epilogue_unbuilt_reason(tier, fp8, resolve(variant, fp8, p.n, p.k), p.silu_inter == 0,
                                      device_has_wgmma(), p.norm.weight != nullptr);
}

std::string unbuilt_ring_message(const GemvVariant& requested, const GemvVariant& resolved, bool fp8) {
  return "gemv variant '" + gemv_variant_name(requested) + "' (" + gemv_variant_name(resolved) +
         ") is not a built register-ring configuration for " + (fp8 ? "fp8" : "bf16") + " weights";
}

}  // namespace

std::string gemv_variant_unsupported_reason(bool fp8, int64_t n, int64_t k, const GemvVariant& variant) {
  const GemvVariant v = resolve(variant, fp8, n, k);
  if ((variant.wgmma || variant.wgmma_narrow || variant.x_tensor) &&
      (variant.kernel == GemvKernel::kStream || v.kernel == GemvKernel::kStream))
    return "':wg', ':wgn' and ':xt' are options of the register-ring kernels";
  if (v.kernel == GemvKernel::kStream) return {};
  return ring_config_supported(ring_config(v, fp8)) ? std::string() : unbuilt_ring_message(variant, v, fp8);
}

std::string gemv_unsupported_reason(int tier, const GemvProblem& p, const GemvWorkspace& ws,
                                    const GemvVariant& variant) {
  std::string why = problem_reason(tier, p);
  if (why.empty()) why = tier_variant_reason(tier, p, variant);
  if (why.empty()) why = workspace_reason(tier, p, ws, variant);
  if (why.empty()) why = epilogue_reason(tier, p, variant);
  return why;
}

std::string gemv_unsupported_reason(int tier, const GemvProblem& p, const GemvWorkspace& ws) {
  return gemv_unsupported_reason(tier, p, ws, GemvVariant{});
}

void gemv_launch(int tier, const GemvProblem& problem, const GemvWorkspace& workspace, cudaStream_t stream,
                 const GemvVariant& variant) {
  const std::string why = gemv_unsupported_reason(tier, problem, workspace, variant);
  if (!why.empty()) {
    throw_error("gemv tier " + std::to_string(tier) + " cannot run n=" + std::to_string(problem.n) +
                " k=" + std::to_string(problem.k) + " m=" + std::to_string(problem.m) + ": " + why);
  }
  Params params{};
  params.w = static_cast<const uint8_t*>(problem.w);
  params.scale = problem.scale;
  params.bias = problem.bias;
  params.x = static_cast<const __nv_bfloat16*>(problem.x);
  params.y = problem.y;
  params.partials = workspace.partials;
  params.counters = workspace.counters;
  params.split_slots = workspace.split_slots;
  params.x_stride = problem.x_stride;
  params.y_stride = problem.y_stride;
  params.n = static_cast<int>(problem.n);
  params.k = static_cast<int>(problem.k);
  params.m = problem.m;
  params.scale_kind = static_cast<int>(problem.scale_kind);
  params.y_f32 = problem.y_f32 ? 1 : 0;
  params.y_add = problem.y_add ? 1 : 0;
  const bool fused = problem.norm.weight != nullptr;
  const bool silu = problem.silu_inter > 0;
  params.silu_inter = static_cast<int>(problem.silu_inter);
  const int epilogue = silu ? kEpiSilu : problem.rope != nullptr ? kEpiRope : kEpiNone;
  if (problem.rope != nullptr) {  // q | k | v are this launch's output rows
    params.rope = *problem.rope;
    params.rope.tokens = problem.m;
    auto* y = static_cast<__nv_bfloat16*>(problem.y);
    params.rope.q = y;
    params.rope.k = y + int64_t{problem.rope->num_heads} * problem.rope->head_dim;
    params.rope.v =
        y + int64_t{problem.rope->num_heads + problem.rope->num_kv_heads} * problem.rope->head_dim;
    params.rope.q_stride = params.rope.k_stride = params.rope.v_stride = problem.y_stride;
  }
  // The 1-row tier's SwiGLU epilogue lets the next kernel (the down projection) launch only after
  // its main loop: released at the start, that GEMV's CTAs took the slots of the finishing
  // gate|up CTAs and the Qwen3-8B-FP8 batch-1 step was 0.9-2.3% longer than with the silu_mul
  // kernel between them; released after the loop, 1.3% shorter. Tiers 4 and 16 gained more with
  // the release at the start (batch 4: 2.4 against 1.3% shorter; docs/PERFORMANCE.md, "Session 26").
  // The QK-norm/RoPE epilogue's 1-row tier does the same. Its tiers 4 and 16 releasing split-K
  // attention after the loop instead measured -1.4 / 0.0 / +0.7% at batch 8 / 16 / 32, all within
  // the noise of the epilogue's own cost there (docs/PERFORMANCE.md, "Session 27").
  params.release_after_loop = epilogue != kEpiNone && tier == 1 ? 1 : 0;
  params.norm_weight = problem.norm.weight;
  params.norm_eps = problem.norm.eps;
  const bool fp8 = problem.weight == GemvWeight::kFp8E4M3;
  const GemvVariant v = resolve(variant, fp8, problem.n, problem.k);
  if (v.kernel == GemvKernel::kStream) {
    const int stages = v.stages > 0 ? v.stages : stream_default_stages(tier, fp8);
    launch_stream(tier, params, fp8, stages, balanced_ctas(v), v.row_bytes == 512 ? 512 : 256, v.tma,
                  v.ctas_per_sm, stream);
    return;
  }
  if (!ring_config_supported(ring_config(v, fp8))) throw_error(unbuilt_ring_message(variant, v, fp8));
  RingConfig cfg = effective_ring_config(v, fp8, fused);
  if (cfg.x_tensor) cfg.x_tensor = tier == 16 && cfg.wgmma && encode_x_map(params);
  const bool balanced = v.kernel == GemvKernel::kRingBalanced;
  // Early weight reads in every tier. On the H200 they took 1.4% off the Qwen3-8B-FP8 step at
  // batch 1 and 1.1% at batch 4. In the 16-row tier they first cost the Qwen3-32B-FP8 batch-16 step
  // 9% (never understood); since that tier's split-K sum batches its loads (session 17) they take
  // 1.3% (8B-FP8), 3.7% (32B-FP8) and 1.0% (8B BF16) off the batch-16 step, docs/PERFORMANCE.md.
  params.early_steps = v.early_weights != kGemvEarlyInherit         ? v.early_weights
                       : problem.early_weights != kGemvEarlyInherit ? problem.early_weights
                                                                    : gemv_early_weights();
  dim3 grid;
  if (balanced) {
    const int ctas = balanced_ctas(v);
    params.ksteps = params.k / kStepK;
    params.total_units = ((params.n + kRowsPerCta - 1) / kRowsPerCta) * params.ksteps;
    params.cta_units = stream_cta_units(problem.n, problem.k, ctas);
    grid = dim3(static_cast<unsigned>(stream_grid(problem.n, problem.k, ctas)));
  } else {
    const int want = ring_split_request(v, problem.n);
    params.ksplit = gemv_ring_ksplit(problem.n, problem.k, want);
    params.chunk_steps = gemv_ring_chunk_steps(problem.n, problem.k, want);
    grid = dim3(static_cast<unsigned>((problem.n + kRowsPerCta - 1) / kRowsPerCta),
                static_cast<unsigned>(params.ksplit));
    // ":sa", built at two CTAs per SM: a block's splits wait (boundedly) for each other, so it is
    // taken only where every CTA of the grid can be resident at once (the launch bounds budget
    // registers for two CTAs an SM, and their shared memory fits), within the bookkeeping limits of
    // its counters (kSplitDeparturesOffset, gemv_common.cuh), and while gemv_split_sum is on.
    params.split_sum_all = v.split_sum_all && gemv_split_sum() && cfg.ctas_per_sm != 3 && tier >= 16 &&
                                   epilogue == kEpiNone && params.ksplit > 1 && params.ksplit <= 16 &&
                                   grid.x <= kSplitDeparturesOffset && problem.n % 4 == 0 &&
                                   int64_t{grid.x} * grid.y <= int64_t{2} * device_sm_count()
                               ? 1
                               : 0;
    params.split_sum_wait_ns = problem.m <= gemv_split_sum_nowait_rows() ? 0u : gemv_split_sum_wait_ns();
  }
  switch (tier) {
    case 1:
      launch_ring_tier1(balanced, fused, epilogue, params, grid, cfg, stream);
      break;
    case 4:
      launch_ring_tier4(balanced, fused, epilogue, params, grid, cfg, stream);
      break;
    case 16:
      launch_ring_tier16(balanced, epilogue, params, grid, cfg, stream);
      break;
    default:  // 32, on the register ring (the stream kernel launched above)
      launch_ring_tier32(balanced, silu, params, grid, cfg, stream);
      break;
  }
}

void fp8_decode_all_codes(uint16_t* out_cvt, uint16_t* out_bits, cudaStream_t stream) {
  decode_codes_kernel<<<1, 256, 0, stream>>>(out_cvt, out_bits);
  LATHE_CUDA_CHECK_LAUNCH();
}

}  // namespace lathe::cuda
