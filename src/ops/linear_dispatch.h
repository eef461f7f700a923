#pragma once
// The linear-layer dispatch ladder: a PURE function from (phase, rows, weight kind, kernels
// available for this weight, levers) to the arm that runs it (ARCHITECTURE rule 7). Decode
// widths 1..32 take the GEMV tiers (one weight pass, every row bit-identical to the m = 1
// kernel); prefill takes the GEMM whatever its row count, so a chunked prefill's short tail never
// lands on a decode arm; decode beyond the GEMV boundary takes the GEMM.
//
// Rungs (decode, GEMV available, m <= gemv_max_m):
//   m = 1 -> gemv;  2..4 -> gemv_batch4;  5..16 -> gemv_batch16 (lever batch16);
//   17..32 -> gemv_batch16 twice on contiguous row halves, first half ceil(m/2) (lever batch16);
//            with lever batch32 (LATHE_FFN_BATCH32, on by default) and a weight whose kernel
//            builds it, one gemv_batch32 launch instead (one weight pass, the same bits per row).
// Decode wider than the tiers, with lever decode_wide_gemv (LATHE_FFN_DECODE_WIDE=gemv): the
//   tiers over consecutive chunks of the widest tier width (one weight pass per chunk), so every
//   decode row keeps the m = 1 kernel's bits at ANY batch width (batch invariance beyond 32 rows,
//   paid in weight passes); off (the default), those rows take the GEMM.
// Everything else, by weight kind: bf16 -> cuBLASLt bf16; fp8 block128 -> cuBLASLt W8A8 block;
// fp8 per-channel or per-tensor -> cuBLASLt W8A8 outer-vector scales; any kind cuBLASLt cannot
// take -> dequantize (or convert) to a bf16 scratch, then cuBLASLt bf16.
#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "ops/tensor.h"

namespace lathe::ops {

enum class LinearWeightKind { kBf16, kFp8PerTensor, kFp8PerChannel, kFp8Block128, kOther };

enum class LinearArm {
  kGemv,
  kGemvBatch4,
  kGemvBatch16,
  kGemvBatch16Halves,
  kGemvBatch32,  // 17..32 rows in one weight pass (lever batch32, where the weight's kernel builds it)
  kGemvChunks,   // decode rows beyond the tiers, run as tier launches over chunks (decode_wide_gemv)
  kGemmBf16,
  kGemmFp8Block,
  kGemmFp8Channel,
  kDequantGemm,
};

// What the backend can run for this weight and shape (alignment, K multiple of 128, cuBLASLt
// support probed once at load).
struct LinearKernels {
  bool gemv = false;
  bool gemm_bf16 = false;
  bool gemm_fp8_block = false;
  bool gemm_fp8_channel = false;
  bool gemv_batch32 = false;  // the 32-row tier runs this weight (asked only under lever batch32)
};

// Read once at boot (linear_levers_from_env) and passed explicitly.
struct LinearLevers {
  bool batch16 = true;  // LATHE_FFN_BATCH16=0 turns the 5..32-row tier off (those rows take the GEMM)
  // LATHE_FFN_BATCH32 (on by default): 17..32 decode rows take ONE 32-row launch (gemv_batch32: the
  // weights read once, each row bit-identical to m = 1) instead of the seed's two 16-row launches,
  // on weights whose kernel builds that tier (every kernel `auto` picks; a variant override such as
  // ':bits' may not: gemv_unsupported_reason), others keep the halves. A deliberate departure from
  // the seed: on the H200 the decode step at batch 17..32 took 0.71-0.82x the halves' time
  // (session 41, docs/PERFORMANCE.md). off restores the halves. Needs batch16.
  bool batch32 = true;
  int gemv_max_m = 32;  // LATHE_FFN_GEMV_MAX_M: decode rows above this take the GEMM (0..32)
  // LATHE_FFN_DECODE_WIDE=gemv: decode rows above the tiers run the tiers chunk by chunk instead of
  // the GEMM (every decode row bit-identical to m = 1 at any width); gemm (default) keeps the GEMM.
  bool decode_wide_gemv = false;
  // LATHE_FFN_FUSED_NORM (0, 1 or 4): decode steps of at most this many rows fuse the residual add
  // + RMS norm between two GEMVs (Backend::linear_add_rms_norm_linear: the o / down projection adds
  // into the residual, the next GEMV tier normalises it itself), one norm launch fewer per site,
  // the same bits; 0 keeps the separate norm kernel. Default 1: on the H200 the Qwen3-8B-FP8 step
  // at batch 1 is 1.9% shorter fused, those at batch 2-4 1.2-2.2% longer (each CTA sums the squares
  // of every row it multiplies; docs/PERFORMANCE.md, "Session 24").
  int fused_norm_rows = 1;
  // LATHE_FFN_FUSED_SILU (on | off): decode gate|up projections on the GEMV tiers compute the
  // SwiGLU in their epilogue (Backend::linear_silu_mul; one silu_mul launch fewer per layer, the
  // same bits); off keeps the separate kernel.
  bool fused_silu = true;
  // LATHE_QKV_FUSED_ROPE (0..32, or off = 0): decode steps of at most this many rows run the
  // QK-norm, RoPE and KV write of their q|k|v projection in the GEMV tiers' epilogue
  // (Backend::linear_qk_norm_rope_kv_write; one launch fewer per layer, the same bits); wider steps
  // keep the separate kernel. Default 4: on the H200 the Qwen3-8B-FP8 step was 2.2% shorter fused at
  // batch 1 and 0.8% at batch 4, 1.2% longer at batch 16 (docs/PERFORMANCE.md, "Session 27").
  int fused_rope_rows = 4;
  // LATHE_GEMM_PREFILL_PIN_M (1..65536): the row count cuBLASLt's heuristic is asked about when
  // the prefill GEMM pins its one algorithm per (n, k). That algorithm serves every prefill m (a
  // row's bits never depend on the chunk it came in); decode steps wider than the tiers pin their
  // own at kDecodeGemmPinM. The pin decides the tile (the block-scaled FP8 route has one
  // candidate whatever the pin; BF16 has several): on the H200, 1024 against the former 256 takes
  // 4.3% off Qwen3-8B BF16's 1024-token prefill at batch 1 and 3.7% at batch 16, and the BF16
  // lm_head's share of every model's (docs/PERFORMANCE.md, "Session 33").
  int64_t gemm_prefill_pin_m = 1024;
};

// The row count the decode-wide GEMM (decode rows above the GEMV tiers) pins its algorithm at.
inline constexpr int64_t kDecodeGemmPinM = 256;

struct LinearRoute {
  LinearArm arm = LinearArm::kGemmBf16;
  int64_t first_half = 0;  // rows of the first launch for kGemvBatch16Halves
  int64_t chunk_rows = 0;  // rows per chunk for kGemvChunks (the widest tier width)
};

LinearRoute choose_linear_arm(Phase phase, int64_t m, LinearWeightKind kind, const LinearKernels& available,
                              const LinearLevers& levers);

LinearWeightKind linear_weight_kind(DType dtype, ScaleKind scale);

// Parses the levers from the environment. A value that cannot be parsed keeps the default and
// is reported in `warnings` (one line per lever), never silently arming another arm.
LinearLevers linear_levers_from_env(std::string* warnings = nullptr);
// The widest decode row count that takes a GEMV tier under `levers` (0: none). Rows above it
// take the GEMM, whose bits differ from the tiers' (CUDA graph buckets must not straddle it), or
// with decode_wide_gemv the tiers chunk by chunk.
int64_t decode_gemv_widest(const LinearLevers& levers);

// "batch16=on gemv_max_m=32" with "(env)" after values that came from the environment.
std::string describe_levers(const LinearLevers& levers);

const char* linear_arm_name(LinearArm arm);
const char* linear_weight_kind_name(LinearWeightKind kind);
const char* phase_name(Phase phase);
// The route's log line (logged once per (phase, kind, arm) by the backend).
std::string describe_route(Phase phase, int64_t m, LinearWeightKind kind, const LinearRoute& route,
                           const LinearLevers& levers);

}  // namespace lathe::ops
