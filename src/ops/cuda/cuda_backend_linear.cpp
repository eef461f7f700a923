// CudaBackend's linear layers: the dispatch ladder's arm per call (ops/linear_dispatch), the
// decode GEMV tiers with their fused forms (the residual add + norm between two GEMVs, the SwiGLU
// epilogue of gate|up, the QK-norm / RoPE / KV write epilogue of q|k|v) and the cuBLASLt GEMMs with
// their activation quantization.
#include <algorithm>
#include <string>
#include <utility>

#include "backends/cuda/fp8_weight_layout.h"
#include "ops/cuda/cuda_backend_class.h"

namespace lathe::ops::cuda_detail {

void CudaBackend::upload_linear_weight(void* dst, const void* host_src, DType dtype, int64_t rows, int64_t cols) {
  const size_t row_bytes = static_cast<size_t>(cols) * dtype_size(dtype);
  if (dtype != DType::kF8E4M3 || !kc::fp8_rows_permuted(cols)) {
    upload(dst, host_src, static_cast<size_t>(rows) * row_bytes);
    return;
  }
  // Whole rows through a device staging buffer, reordered on the device (a host pass over a 32B
  // checkpoint's bytes would add tens of seconds to the load).
  constexpr size_t kChunkBytes = size_t{64} << 20;
  const int64_t chunk_rows = std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / row_bytes));
  const size_t staging_bytes = static_cast<size_t>(std::min(rows, chunk_rows)) * row_bytes;
  void* staging = alloc(staging_bytes);
  const auto* src = static_cast<const uint8_t*>(host_src);
  try {
    for (int64_t first = 0; first < rows; first += chunk_rows) {
      const int64_t n = std::min(chunk_rows, rows - first);
      const size_t offset = static_cast<size_t>(first) * row_bytes;
      upload(staging, src + offset, static_cast<size_t>(n) * row_bytes);  // waits: staging is reused
      kc::permute_fp8_rows_on_device(static_cast<const uint8_t*>(staging), static_cast<uint8_t*>(dst) + offset, n,
                                     cols, stream_);
    }
    synchronize();
  } catch (...) {
    free(staging);
    throw;
  }
  free(staging);
}

void CudaBackend::linear(Phase phase, Act x, const WeightView& w, Act out) {
  require_bf16(x, "linear", "x");
  if (x.cols != w.cols || out.rows != x.rows || out.cols != w.rows)
    fail("cuda linear: x [{}, {}] . W[{}, {}]^T does not give out [{}, {}]", x.rows, x.cols, w.rows, w.cols, out.rows,
         out.cols);
  if (out.dtype != DType::kBF16 && out.dtype != DType::kF32)
    fail("cuda linear: out dtype {} (expected BF16 or F32)", dtype_name(out.dtype));
  if (x.rows == 0) return;
  const LinearWeightKind kind = linear_weight_kind(w.dtype, w.scale_kind);
  const LinearRoute route = plan_linear(phase, x, w, out);
  if (log_once(fmt::format("linear:{}:{}:{}", phase_name(phase), linear_weight_kind_name(kind), linear_arm_name(route.arm))))
    spdlog::info("{}", describe_route(phase, x.rows, kind, route, levers_));
  switch (route.arm) {
    case LinearArm::kGemv:
    case LinearArm::kGemvBatch4:
    case LinearArm::kGemvBatch16:
    case LinearArm::kGemvBatch16Halves:
    case LinearArm::kGemvBatch32:
      run_gemv(route, x, w, out);
      break;
    case LinearArm::kGemvChunks:
      // Each chunk takes the tier its own width takes (every row bit-identical to m = 1).
      for (int64_t first = 0; first < x.rows; first += route.chunk_rows) {
        const int64_t rows = std::min(route.chunk_rows, x.rows - first);
        linear(phase, x.slice_rows(first, rows), w, out.slice_rows(first, rows));
      }
      break;
    default:
      run_gemm(phase, route.arm, x, w, out);
      break;
  }
}

// The GEMV problem of x . W^T -> out (all rows from row 0).
kc::GemvProblem gemv_problem(const Act& x, const WeightView& w, const Act& out) {
  kc::GemvProblem p;
  p.w = w.data;
  p.weight = w.dtype == DType::kBF16 ? kc::GemvWeight::kBf16 : kc::GemvWeight::kFp8E4M3;
  p.n = w.rows;
  p.k = w.cols;
  p.scale_kind = gemv_scale(w.scale_kind);
  p.scale = w.scale;
  p.bias = w.bias;
  p.x = x.data;
  p.x_stride = x.stride;
  p.y = out.data;
  p.y_stride = out.stride;
  p.y_f32 = out.dtype == DType::kF32;
  p.m = static_cast<int>(x.rows);
  return p;
}

LinearRoute CudaBackend::plan_linear(Phase phase, const Act& x, const WeightView& w, const Act& out) {
  const bool out_f32 = out.dtype == DType::kF32;
  const LinearWeightKind kind = linear_weight_kind(w.dtype, w.scale_kind);
  LinearKernels avail;
  if (kind != LinearWeightKind::kOther) {
    kc::GemvProblem probe = gemv_problem(x, w, out);
    probe.m = 1;
    avail.gemv = kc::gemv_unsupported_reason(1, probe, gemv_ws_).empty();
    // Asked only where it could be taken (lever on, a 17..32-row decode step): a host-side check
    // per call, cheap but not free.
    if (levers_.batch32 && phase == Phase::kDecode && x.rows > 16 && x.rows <= 32) {
      probe.m = static_cast<int>(x.rows);
      avail.gemv_batch32 = kc::gemv_unsupported_reason(32, probe, gemv_ws_).empty();
    }
  }
  avail.gemm_bf16 = true;
  const bool lt_fp8_shape = w.cols % 16 == 0 && x.stride % 16 == 0;
  if (kind == LinearWeightKind::kFp8Block128)
    avail.gemm_fp8_block = kW8A8BlockVerified && lt_fp8_shape && kc::lt_block_supported(w.rows, w.cols) &&
                           lt(phase).available(kc::LtKind::kFp8Block, w.rows, w.cols, out_f32);
  if (kind == LinearWeightKind::kFp8PerChannel || kind == LinearWeightKind::kFp8PerTensor)
    avail.gemm_fp8_channel =
        lt_fp8_shape && lt(phase).available(kc::LtKind::kFp8Channel, w.rows, w.cols, out_f32);
  return choose_linear_arm(phase, x.rows, kind, avail, levers_);
}

namespace {

// A fusion the levers ask for that the GEMV cannot run (its kernel configuration is not built, or
// the launch is refused otherwise): the step stays correct with the separate kernel, yet pays a
// launch a layer, so the route says so once per (fusion, tier, weight shape) instead of silently.
void log_fusion_refused(const char* fusion, int tier, const WeightView& w, const std::string& why) {
  const std::string key = std::string("linear:fusion_refused:") + fusion + ":" + std::to_string(tier) + ":" +
                          std::to_string(w.rows) + "x" + std::to_string(w.cols);
  if (log_once(key))
    spdlog::info("linear route: {} not fused into decode tier {} of {}x{} (a separate launch runs): {}", fusion, tier,
                 w.rows, w.cols, why);
}

}  // namespace

int CudaBackend::fusable_tier(const LinearRoute& route, const Act& x, const WeightView& w, const Act& out,
                              const kc::GemvNormInput& norm, bool y_add) {
  if (route.arm != LinearArm::kGemv && route.arm != LinearArm::kGemvBatch4) return 0;
  if (x.dtype != DType::kBF16 || out.dtype != DType::kBF16) return 0;
  kc::GemvProblem probe = gemv_problem(x, w, out);
  probe.norm = norm;
  probe.y_add = y_add;
  const int tier = route.arm == LinearArm::kGemv ? 1 : 4;
  if (const std::string why = kc::gemv_unsupported_reason(tier, probe, gemv_ws_); !why.empty()) {
    log_fusion_refused("the residual add + RMSNorm (add_rms_norm)", tier, w, why);
    return 0;
  }
  return tier;
}

void CudaBackend::linear_add_rms_norm_linear(Phase phase, Act x, const WeightView& w, Act residual, Act delta,
                                             const float* norm_weight, float eps, Act normed,
                                             const WeightView& next, Act out, Act silu_out,
                                             const QkNormRopeStep* rope) {
  // Fused where both linears take tier 1 or 4 as they are: the first adds its output into the
  // residual (GemvProblem::y_add), the second normalises the residual itself (GemvNormInput);
  // anywhere else the three ops run as themselves (the same bits either way).
  const int64_t m = x.rows;
  if (phase == Phase::kDecode && m >= 1 && m <= levers_.fused_norm_rows && residual.rows == m &&
      delta.rows == m && normed.rows == m && out.rows == m && x.cols == w.cols && residual.cols == w.rows &&
      next.cols == w.rows && out.cols == next.rows && delta.cols == residual.cols &&
      normed.cols == residual.cols) {
    const kc::GemvNormInput norm{norm_weight, eps};
    const LinearRoute first = plan_linear(phase, x, w, residual);
    const LinearRoute second = plan_linear(phase, residual, next, out);
    if (fusable_tier(first, x, w, residual, {}, true) != 0 &&
        fusable_tier(second, residual, next, out, norm, false) != 0) {
      if (log_once("linear:fused_norm"))
        spdlog::info(
            "linear route: decode rows <= {} add the o / down projection into the residual and normalise it "
            "inside the next gemv tier (no add + norm launch between them, the same bits; ffn_fused_norm={})",
            levers_.fused_norm_rows, levers_.fused_norm_rows);
      run_gemv(first, x, w, residual, {}, true);
      if (silu_out.data != nullptr) {
        if (!try_gemv_silu(phase, residual, next, out, silu_out, norm)) {
          run_gemv(second, residual, next, out, norm);
          silu_mul(out, silu_out);
        }
      } else if (rope != nullptr) {
        if (!try_gemv_rope(phase, residual, next, out, *rope, norm)) {
          run_gemv(second, residual, next, out, norm);
          qk_norm_rope_kv_write_cols(out, *rope);
        }
      } else {
        run_gemv(second, residual, next, out, norm);
      }
      return;
    }
  }
  Backend::linear_add_rms_norm_linear(phase, x, w, residual, delta, norm_weight, eps, normed, next, out,
                                      silu_out, rope);
}

void CudaBackend::linear_silu_mul(Phase phase, Act x, const WeightView& w, Act gate_up, Act out) {
  if (!try_gemv_silu(phase, x, w, gate_up, out, {})) Backend::linear_silu_mul(phase, x, w, gate_up, out);
}

namespace {

// The GEMV tier of a decode route over `rows` rows and its widest launch's rows (the larger half
// for two 16-row launches); 0 when the route is not a GEMV tier.
int gemv_route_tier(const LinearRoute& route, int64_t rows, int64_t& widest) {
  widest = rows;
  switch (route.arm) {
    case LinearArm::kGemv:
      return 1;
    case LinearArm::kGemvBatch4:
      return 4;
    case LinearArm::kGemvBatch16:
      return 16;
    case LinearArm::kGemvBatch16Halves:
      widest = std::max(route.first_half, rows - route.first_half);
      return 16;
    case LinearArm::kGemvBatch32:
      return 32;
    default:
      return 0;
  }
}

}  // namespace

bool CudaBackend::try_gemv_silu(Phase phase, const Act& x, const WeightView& w, const Act& gate_up,
                                const Act& out, const kc::GemvNormInput& norm) {
  if (!levers_.fused_silu || phase != Phase::kDecode || x.rows < 1 || x.dtype != DType::kBF16 ||
      out.dtype != DType::kBF16 || w.rows % 2 != 0 || x.cols != w.cols || gate_up.rows != x.rows ||
      gate_up.cols != w.rows || out.rows != x.rows || out.cols != w.rows / 2)
    return false;
  const LinearRoute route = plan_linear(phase, x, w, gate_up);
  int64_t widest = 0;
  const int tier = gemv_route_tier(route, x.rows, widest);
  if (tier == 0) return false;
  kc::GemvProblem probe = gemv_problem(x.slice_rows(0, widest), w, out.slice_rows(0, widest));
  probe.norm = norm;
  probe.silu_inter = w.rows / 2;
  if (const std::string why = kc::gemv_unsupported_reason(tier, probe, gemv_ws_); !why.empty()) {
    log_fusion_refused("the SwiGLU (silu_mul)", tier, w, why);
    return false;
  }
  if (log_once("linear:fused_silu"))
    spdlog::info(
        "linear route: decode gate|up tiers compute the SwiGLU in their epilogue (no silu_mul launch, the "
        "same bits; ffn_fused_silu=on)");
  run_gemv(route, x, w, out, norm, false, w.rows / 2);
  return true;
}

void CudaBackend::linear_qk_norm_rope_kv_write(Phase phase, Act x, const WeightView& w, Act qkv,
                                               const QkNormRopeStep& step) {
  if (!try_gemv_rope(phase, x, w, qkv, step, {}))
    Backend::linear_qk_norm_rope_kv_write(phase, x, w, qkv, step);
}

bool CudaBackend::try_gemv_rope(Phase phase, const Act& x, const WeightView& w, const Act& qkv,
                                const QkNormRopeStep& step, const kc::GemvNormInput& norm) {
  const AttentionShape& shape = *step.shape;
  const KvCacheShape& cache_shape = *step.cache_shape;
  if (x.rows > levers_.fused_rope_rows || phase != Phase::kDecode || x.rows < 1 ||
      x.rows != step.batch->num_tokens || x.dtype != DType::kBF16 || qkv.dtype != DType::kBF16 ||
      x.cols != w.cols || qkv.rows != x.rows || qkv.cols != w.rows ||
      qkv.cols != int64_t{shape.num_heads + 2 * shape.num_kv_heads} * shape.head_dim ||
      (cache_shape.dtype != DType::kBF16 && cache_shape.dtype != DType::kF8E4M3) ||
      cache_shape.head_dim != shape.head_dim || cache_shape.num_kv_heads != shape.num_kv_heads)
    return false;
  const LinearRoute route = plan_linear(phase, x, w, qkv);
  int64_t widest = 0;
  const int tier = gemv_route_tier(route, x.rows, widest);
  if (tier == 0) return false;
  const kc::QkNormRopeArgs args = qk_norm_rope_args(step);
  kc::GemvProblem probe = gemv_problem(x.slice_rows(0, widest), w, qkv.slice_rows(0, widest));
  probe.norm = norm;
  probe.rope = &args;
  if (const std::string why = kc::gemv_unsupported_reason(tier, probe, gemv_ws_); !why.empty()) {
    log_fusion_refused("the QK-norm/RoPE/KV write (qk_norm_rope_kv_write)", tier, w, why);
    return false;
  }
  if (log_once("linear:fused_rope"))
    spdlog::info(
        "linear route: decode q|k|v tiers of steps <= {} rows run the QK-norm, RoPE and KV write in their "
        "epilogue (no qk_norm_rope_kv_write launch, the same bits; qkv_fused_rope={})",
        levers_.fused_rope_rows, levers_.fused_rope_rows);
  run_gemv(route, x, w, qkv, norm, false, 0, &args);
  return true;
}

void CudaBackend::run_gemv(const LinearRoute& route, Act x, const WeightView& w, Act out,
                           const kc::GemvNormInput& norm, bool y_add, int64_t silu_inter,
                           const kc::QkNormRopeArgs* rope) {
  const bool after_attention = std::exchange(gemv_after_attention_, false);
  kc::QkNormRopeArgs rope_rows;  // rope's tokens from the launch's first row (problem)
  auto problem = [&](int64_t first, int64_t rows) {
    kc::GemvProblem p = gemv_problem(x.slice_rows(first, rows), w, out.slice_rows(first, rows));
    // The 4-row tier right after attention (the o projection) reads no weights before its wait:
    // there they made the Qwen3-32B step at batch 3-4 ~40% slower (~120 us a layer; cause not
    // established). At batch 1 and 16 they gain ~1% (docs/PERFORMANCE.md, "Session 18").
    if (after_attention && route.arm == LinearArm::kGemvBatch4) p.early_weights = -1;
    p.norm = norm;  // tiers 1 and 4 only (linear_add_rms_norm_linear)
    p.y_add = y_add;
    p.silu_inter = silu_inter;
    if (rope != nullptr) {
      rope_rows = *rope;
      rope_rows.positions += first;
      rope_rows.slot_mapping += first;
      p.rope = &rope_rows;
    }
    return p;
  };
  switch (route.arm) {
    case LinearArm::kGemv:
      kc::gemv_launch(1, problem(0, x.rows), gemv_ws_, stream_);
      break;
    case LinearArm::kGemvBatch4:
      kc::gemv_launch(4, problem(0, x.rows), gemv_ws_, stream_);
      break;
    case LinearArm::kGemvBatch16:
      kc::gemv_launch(16, problem(0, x.rows), gemv_ws_, stream_);
      break;
    case LinearArm::kGemvBatch32:
      kc::gemv_launch(32, problem(0, x.rows), gemv_ws_, stream_);
      break;
    default:
      kc::gemv_launch(16, problem(0, route.first_half), gemv_ws_, stream_);
      kc::gemv_launch(16, problem(route.first_half, x.rows - route.first_half), gemv_ws_, stream_);
      break;
  }
}

void CudaBackend::run_gemm(Phase phase, LinearArm arm, Act x, const WeightView& w, Act out) {
  gemv_after_attention_ = false;  // the linear after attention took the GEMM
  const int64_t n = w.rows, k = w.cols;
  const bool out_f32 = out.dtype == DType::kF32;
  const kc::RowType out_type = out_f32 ? kc::RowType::kF32 : kc::RowType::kBf16;
  if (arm == LinearArm::kGemmBf16 || arm == LinearArm::kDequantGemm) {
    const void* weight = w.data;
    if (arm == LinearArm::kDequantGemm) {
      void* bf = scratch(kDequant, static_cast<size_t>(n * k) * 2);
      if (w.dtype == DType::kF8E4M3) {
        kc::dequantize_fp8_weight(static_cast<const uint8_t*>(w.data), n, k, static_cast<int>(w.scale_kind), w.scale, bf,
                                  stream_);
      } else {
        kc::launch_convert_to_bf16(w.data, row_type(w.dtype, "linear", "weight"), n * k, bf, stream_);
      }
      weight = bf;
    }
    lt(phase).run(kc::LtKind::kBf16, x.rows, n, k,
                  kc::LtOperands{weight, x.data, x.stride, out.data, out.stride, out_f32}, stream_);
  } else {
    const bool block = arm == LinearArm::kGemmFp8Block;
    const float* w_scale = w.scale;
    if (!block && w.scale_kind == ScaleKind::kPerTensor) {
      auto* vec = static_cast<float*>(scratch(kScaleVector, static_cast<size_t>(n) * sizeof(float)));
      kc::broadcast_f32(w.scale, vec, n, stream_);
      w_scale = vec;
    }
    const int64_t kb = (k + 127) / 128;
    const size_t out_elem = out_f32 ? sizeof(float) : 2;
    // The block route runs a multiple of kLtBlockRowMultiple rows: padding rows quantize to zero
    // (values and scales) and their outputs land in a scratch, never in `out`. Row bits do not
    // depend on the padded count (RowsAreBitIdenticalAcrossM_Fp8Block).
    const auto padded = [block](int64_t rows) {
      return block ? (rows + kc::kLtBlockRowMultiple - 1) / kc::kLtBlockRowMultiple * kc::kLtBlockRowMultiple : rows;
    };
    for (int64_t first = 0; first < x.rows; first += kQuantRowsPerCall) {
      const int64_t rows = std::min(kQuantRowsPerCall, x.rows - first);
      const int64_t gemm_rows = padded(rows);
      auto* q = static_cast<uint8_t*>(
          scratch(kQuantAct, static_cast<size_t>(padded(std::min(kQuantRowsPerCall, x.rows)) * k)));
      auto* s = static_cast<float*>(
          scratch(kQuantScale, static_cast<size_t>(kb * kc::lt_act_scale_pitch(kQuantRowsPerCall)) * sizeof(float)));
      const Act xs = x.slice_rows(first, rows);
      const Act ys = out.slice_rows(first, rows);
      if (block) {
        if (gemm_rows != rows) {
          LATHE_CUDA_CHECK(cudaMemsetAsync(q + rows * k, 0, static_cast<size_t>((gemm_rows - rows) * k), stream_));
          LATHE_CUDA_CHECK(cudaMemsetAsync(s, 0, static_cast<size_t>(kb * gemm_rows) * sizeof(float), stream_));
        }
        kc::quantize_act_block128(xs.data, x.stride, rows, k, q, s, kc::lt_act_scale_pitch(rows), true, stream_);
      } else {
        kc::quantize_act_per_token(xs.data, x.stride, rows, k, q, s, stream_);
      }
      void* y = ys.data;
      int64_t y_stride = out.stride;
      if (gemm_rows != rows) {
        y = scratch(kPaddedOut, static_cast<size_t>(gemm_rows * n) * out_elem);
        y_stride = n;
      }
      lt(phase).run(block ? kc::LtKind::kFp8Block : kc::LtKind::kFp8Channel, gemm_rows, n, k,
                    kc::LtOperands{w.data, q, k, y, y_stride, out_f32, w_scale, s}, stream_);
      if (gemm_rows != rows) {
        LATHE_CUDA_CHECK(cudaMemcpy2DAsync(ys.data, static_cast<size_t>(out.stride) * out_elem, y,
                                           static_cast<size_t>(n) * out_elem, static_cast<size_t>(n) * out_elem,
                                           static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, stream_));
      }
    }
  }
  if (w.bias) kc::launch_bias_add(out.data, out_type, out.stride, out.rows, out.cols, w.bias, stream_);
}

}  // namespace lathe::ops::cuda_detail
