// lathe_bench_kernels: the decode-width linear benchmark (docs/PERFORMANCE.md, "Decode-width linear layers").
//
// 1. Measures the device read ceiling with a 16-byte-load read kernel over 4 GiB (best of 10).
// 2. For every linear shape of Qwen3-8B, Qwen3-32B and the Qwen3.5-27B class, in FP8 (block128
//    scales) and BF16, at m in {1, 2, 4, 8, 16, 24, 32}: our tier (chosen by the dispatch
//    ladder as a stock serve runs it: at 17..32 rows the one-pass 32-row tier, with the two 16-row
//    halves beside it), cuBLASLt FP8 with per-tensor scales (heuristic per m) and cuBLAS BF16, timed as the
//    median over CUDA-graph replays (20 launches per graph) with inputs rotated over copies larger
//    than L2. GB/s counts the weight bytes once per launch-equivalent; % is of the ceiling. Each
//    shape also gets "read (same bytes)": the read kernel over the same weight copies, the cost of
//    one launch that only reads them (ramp-up and tail included).
//
// 3. --variants: instead of 2., every GEMV kernel variant (stream kernel ring depths and grid,
//    the former register-ring kernel) side by side at m in {1, 4, 16}, each checked against the
//    register-ring kernel's output (normalized L2 error of the bf16 outputs, m = 16).
//
// --variant-fp8/--variant-bf16 NAME: the kernel measured as "ours" (default: the library's
// default; NAME in gemv_variant_name syntax, e.g. ringbal, stream:r512).
//
// --variant-list A,B,...: the variants --variants compares (default: kVariants); --no-peers
// skips cuBLASLt/cuBLAS.
//
// --shapes decode: only the Qwen3-8B/32B decode-layer shapes (kDecodeShapes).
//
// --after-norm (with --variants): each variant timed as it runs in a decode step, right after the
// residual-add RMSNorm that writes its x (chained, as the backend launches them): a graph of
// (norm, GEMV) pairs minus a graph of the norms alone, reported per GEMV ("norm alone" is printed
// too). Back-to-back GEMVs (the default) may start each launch under the previous one's tail,
// which a step's norm-then-GEMV order does not allow; their ranking can differ from the step's
// (docs/PERFORMANCE.md, "Session 15"). The norm stands in for whatever writes x in a step; for
// the down projections (x from SwiGLU, k = 12288 / 25600) it takes the norm's scalar path.
//
// --fused-norm (with --variants): tiers 1 and 4 normalise x themselves (GemvNormInput, as a decode
// step of at most ffn_fused_norm rows runs q|k|v and gate|up), back to back; shapes whose k the
// fused norm does not take (above 8192) say so and are skipped.
//
// --only TEXT, --widths A,B, --dtype fp8|bf16: narrow the run to shapes whose "model/name"
// contains TEXT, to those widths and to one weight dtype (e.g. to put one kernel under ncu).
//
// --tma-l2-promotion none|64|128|256: the L2 promotion of the `:tma` stream variants' weight
// copies (cuda::set_gemv_tma_l2_promotion; default none since session 39).
//
// Usage: lathe_bench_kernels [--out DIR] [--quick] [--variants] [--variant-list A,B] [--no-peers]
//                            [--after-norm] [--shapes decode] [--variant-fp8 NAME] [--variant-bf16 NAME]
//                            [--only TEXT] [--widths A,B] [--dtype fp8|bf16]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/check.h"
#include "backends/cuda/device.h"
#include "backends/cuda/elementwise.h"
#include "backends/cuda/gemm_lt.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/probe.h"
#include "backends/cuda/quant.h"
#include "common/device_buffer.h"
#include "common/graph_timing.h"
#include "common/l2_promotion_arg.h"
#include "common/list_arg.h"
#include "common/read_ceiling.h"
#include "core/error.h"
#include "ops/cuda/chained_launch_lever.h"
#include "ops/linear_dispatch.h"

namespace {

using namespace lathe;
using namespace lathe::cuda;

constexpr size_t kRotateBytes = size_t{160} << 20;  // > 2x the 60 MB L2
constexpr int kLaunchesPerGraph = 20;
constexpr int kTimedReplays = 15;

struct Shape {
  const char* model;
  const char* name;
  int64_t n, k;
};

const std::vector<Shape> kShapes = {
    {"qwen3-8b", "qkv(fused)", 6144, 4096},      {"qwen3-32b", "qkv(fused)", 10240, 5120},
    {"qwen3-8b", "q/o_proj", 4096, 4096},        {"qwen3-8b", "k/v_proj", 1024, 4096},
    {"qwen3-8b", "gate_up", 24576, 4096},        {"qwen3-8b", "down", 4096, 12288},
    {"qwen3-8b", "lm_head", 151936, 4096},       {"qwen3-32b", "q_proj", 8192, 5120},
    {"qwen3-32b", "k/v_proj", 1024, 5120},       {"qwen3-32b", "o_proj", 5120, 8192},
    {"qwen3-32b", "gate_up", 51200, 5120},       {"qwen3-32b", "down", 5120, 25600},
    {"qwen3-32b", "lm_head", 151936, 5120},      {"qwen3.5-27b", "q_proj(gated)", 12288, 5120},
    {"qwen3.5-27b", "k/v_proj", 1024, 5120},     {"qwen3.5-27b", "o_proj", 5120, 6144},
    {"qwen3.5-27b", "in_proj_qkv", 10240, 5120}, {"qwen3.5-27b", "gate_up", 34816, 5120},
    {"qwen3.5-27b", "down", 5120, 17408},        {"qwen3.5-27b", "lm_head", 248320, 5120},
};
// The Qwen3 dense decode layer (fused q|k|v, o, fused gate|up, down) of the 8B and the 32B:
// the shapes gemv_default_variant is chosen on (--shapes decode).
const std::vector<Shape> kDecodeShapes = {
    {"qwen3-8b", "qkv(fused)", 6144, 4096},  {"qwen3-8b", "o_proj", 4096, 4096},
    {"qwen3-8b", "gate_up", 24576, 4096},    {"qwen3-8b", "down", 4096, 12288},
    {"qwen3-32b", "qkv(fused)", 10240, 5120}, {"qwen3-32b", "o_proj", 5120, 8192},
    {"qwen3-32b", "gate_up", 51200, 5120},   {"qwen3-32b", "down", 5120, 25600}};
const std::vector<Shape> kQuickShapes = {
    {"qwen3-8b", "gate_up", 24576, 4096}, {"qwen3-8b", "down", 4096, 12288}, {"qwen3.5-27b", "down", 5120, 17408},
    {"qwen3.5-27b", "gate_up", 34816, 5120}, {"qwen3-8b", "q/o_proj", 4096, 4096}};

using Buffer = bench::DeviceBuffer;

// Median microseconds per launch of `launch(copy)` over graph replays (copies rotated).
double time_graph(cudaStream_t stream, int copies, const std::function<void(int)>& launch) {
  return bench::graph_us_per_launch(stream, kLaunchesPerGraph, kTimedReplays, /*warmups=*/3,
                                    [&](int i) { launch(i % copies); });
}

// Compared side by side with --variants (gemv_variant_name syntax).
const std::vector<const char*> kVariants = {
    "ring",               // the former default: one CTA per (row block, K split), register ring
    "ringbal",            // the register ring on a persistent byte-balanced grid (264 CTAs)
    "stream",             // bulk copies into a smem ring, 132 CTAs, deepest ring
    "stream:s3",          // the same, 3 stages
    "stream:r512",        // 512 bytes of each row per stage (2 stages)
    "stream:s2:c256",     // two CTAs per SM
    "stream:tma",         // one 2-D tensor copy per warp and stage instead of one copy per row
};

float bf16_to_float(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// ||a - b|| / ||b|| over n bf16 values.
double normalized_error(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = bf16_to_float(a[i]), y = bf16_to_float(b[i]);
    num += (x - y) * (x - y);
    den += y * y;
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  bool quick = false;
  bool variants = false;
  std::string ours_fp8 = "default", ours_bf16 = "default";
  std::vector<std::string> variant_list(kVariants.begin(), kVariants.end());
  bool peers = true;
  bool decode_shapes = false;
  bool after_norm = false;
  bool fused_norm = false;
  std::string only, only_dtype;
  std::vector<int> only_widths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      out_dir = argv[++i];
    } else if (arg == "--quick") {
      quick = true;
    } else if (arg == "--variants") {
      variants = true;
    } else if (arg == "--variant-list" && i + 1 < argc) {
      variant_list = bench::split_list(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--widths" && i + 1 < argc) {
      for (const std::string& w : bench::split_list(argv[++i])) only_widths.push_back(std::atoi(w.c_str()));
    } else if (arg == "--dtype" && i + 1 < argc && (std::strcmp(argv[i + 1], "fp8") == 0 || std::strcmp(argv[i + 1], "bf16") == 0)) {
      only_dtype = argv[++i];
    } else if (arg == "--no-peers") {
      peers = false;
    } else if (arg == "--tma-l2-promotion" && i + 1 < argc) {
      if (!bench::apply_l2_promotion_arg(argv[i], argv[i + 1], cuda::set_gemv_tma_l2_promotion,
                                         "stream:tma weight copies"))
        return 2;
      ++i;
    } else if (arg == "--after-norm") {
      after_norm = true;
    } else if (arg == "--fused-norm") {
      fused_norm = true;
    } else if (arg == "--shapes" && i + 1 < argc && std::strcmp(argv[i + 1], "decode") == 0) {
      decode_shapes = true;
      ++i;
    } else if (arg == "--variant-fp8" && i + 1 < argc) {
      ours_fp8 = argv[++i];
    } else if (arg == "--variant-bf16" && i + 1 < argc) {
      ours_bf16 = argv[++i];
    } else {
      std::fprintf(
          stderr,
          "usage: lathe_bench_kernels [--out DIR] [--quick] [--variants] [--variant-list A,B] [--no-peers] "
          "[--after-norm | --fused-norm] [--shapes decode] [--variant-fp8 NAME] [--variant-bf16 NAME] "
          "[--only TEXT] [--widths A,B] [--dtype fp8|bf16] [--tma-l2-promotion none|64|128|256]\n");
      return 2;
    }
  }
  if (after_norm && fused_norm) {
    std::fprintf(
        stderr,
        "lathe_bench_kernels: --after-norm and --fused-norm are two ways to time x's norm; pick one\n");
    return 2;
  }
  try {
    if (device_count() == 0) {
      std::fprintf(stderr, "lathe_bench_kernels: no CUDA device\n");
      return 77;
    }
    const DeviceInfo info = select_device(0);
    // As the backend launches on this device: chained (PDL) from sm_90 unless LATHE_CHAINED_LAUNCH
    // is off, with the weights before the wait as LATHE_GEMV_EARLY_WEIGHTS says and the shared
    // split-K sum (':sa') as LATHE_GEMV_SPLIT_SUM says.
    ops::cuda::configure_chained_launch(info.sm_major);
    ops::cuda::configure_gemv_early_weights();
    ops::cuda::configure_gemv_split_sum();
    cudaStream_t stream;
    LATHE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::string log = fmt::format("device: {}\nours: fp8 {}, bf16 {}\nchained launches: {}\n", describe(info), ours_fp8,
                                  ours_bf16, chained_launch_enabled() ? "on" : "off");
    const bench::ReadCeiling measured = bench::measure_read_ceiling(stream);
    log += fmt::format(
        "read ceiling: best {:.0f} GB/s, median {:.0f} GB/s (16-byte loads over 4 GiB, 10 runs)\n",
        measured.best_gbs, measured.median_gbs);
    const double ceiling = measured.best_gbs;
    std::fputs(log.c_str(), stdout);
    std::fputs(fmt::format("{:<12} {:<14} {:>6} {:>6} {:<5} {:>3} {:<18} {:>9} {:>7} {:>6}\n", "model", "shape", "n", "k",
                           "dtype", "m", "impl", "us", "GB/s", "%ceil")
                   .c_str(),
               stdout);

    const size_t lt_ws_bytes = size_t{64} << 20;
    Buffer lt_ws(lt_ws_bytes);
    cublasHandle_t blas;
    LATHE_CUBLAS_CHECK(cublasCreate(&blas));
    LATHE_CUBLAS_CHECK(cublasSetStream(blas, stream));
    Buffer blas_ws(lt_ws_bytes);
    LATHE_CUBLAS_CHECK(cublasSetWorkspace(blas, blas_ws.ptr, lt_ws_bytes));
    Buffer gemv_ws_bytes(gemv_workspace_bytes());
    const GemvWorkspace ws = gemv_workspace_in(gemv_ws_bytes.ptr, stream);
    Buffer unit_scale(sizeof(float)), sink(16);
    const float one = 1.0f;
    LATHE_CUDA_CHECK(cudaMemcpy(unit_scale.ptr, &one, sizeof one, cudaMemcpyHostToDevice));

    // --after-norm: the norm's residual and delta (32 rows of the widest k) and its unit weight.
    const int64_t max_k = 32768;
    Buffer norm_residual(static_cast<size_t>(32 * max_k) * 2),
        norm_delta(static_cast<size_t>(32 * max_k) * 2),
        norm_weight(static_cast<size_t>(max_k) * sizeof(float));
    fill_random(norm_residual.ptr, static_cast<size_t>(32 * max_k), FillKind::kBf16Unit, 7, stream);
    fill_random(norm_delta.ptr, static_cast<size_t>(32 * max_k), FillKind::kBf16Unit, 8, stream);
    {
      const std::vector<float> ones(static_cast<size_t>(max_k), 1.0f);
      LATHE_CUDA_CHECK(
          cudaMemcpy(norm_weight.ptr, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    const std::vector<int> widths = !only_widths.empty() ? only_widths
                                    : variants           ? std::vector<int>{1, 4, 16}
                                    : quick              ? std::vector<int>{1, 4, 16, 32}
                                                         : std::vector<int>{1, 2, 4, 8, 16, 24, 32};
    const ops::LinearLevers levers;  // defaults: what a stock serve runs
    std::string table = fmt::format("{:<12} {:<14} {:>6} {:>6} {:<5} {:>3} {:<18} {:>9} {:>7} {:>6}\n", "model", "shape", "n",
                                     "k", "dtype", "m", "impl", "us", "GB/s", "%ceil");
    std::string summary;
    for (const Shape& shape : decode_shapes ? kDecodeShapes : quick ? kQuickShapes : kShapes) {
      if (!only.empty() && fmt::format("{}/{}", shape.model, shape.name).find(only) == std::string::npos) continue;
      for (const bool fp8 : {true, false}) {
        if (!only_dtype.empty() && only_dtype != (fp8 ? "fp8" : "bf16")) continue;
        const size_t elem = fp8 ? 1 : 2;
        const size_t w_bytes = static_cast<size_t>(shape.n * shape.k) * elem;
        const size_t x_bytes = static_cast<size_t>(32 * shape.k) * 2;
        const size_t y_bytes = static_cast<size_t>(32 * shape.n) * 2;
        const int copies = static_cast<int>(std::clamp<size_t>(kRotateBytes / (w_bytes + x_bytes) + 1, 2, 48));
        const int64_t kb = (shape.k + 127) / 128, nb = (shape.n + 127) / 128;
        std::vector<std::unique_ptr<Buffer>> ws_w, ws_x, ws_xq, ws_y, ws_s;
        for (int c = 0; c < copies; ++c) {
          ws_w.push_back(std::make_unique<Buffer>(w_bytes));
          ws_x.push_back(std::make_unique<Buffer>(x_bytes));
          ws_xq.push_back(std::make_unique<Buffer>(x_bytes / 2));
          ws_y.push_back(std::make_unique<Buffer>(y_bytes * 2));
          ws_s.push_back(std::make_unique<Buffer>(static_cast<size_t>(nb * kb) * sizeof(float)));
          fill_random(ws_w[c]->ptr, w_bytes / elem, fp8 ? FillKind::kFp8E4M3 : FillKind::kBf16Unit, 11 + c, stream);
          fill_random(ws_x[c]->ptr, x_bytes / 2, FillKind::kBf16Unit, 101 + c, stream);
          fill_random(ws_xq[c]->ptr, x_bytes / 2, FillKind::kFp8E4M3, 201 + c, stream);
          fill_random(ws_s[c]->ptr, static_cast<size_t>(nb * kb), FillKind::kF32Unit, 301 + c, stream);
        }
        LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
        double ours_m1 = 0, ours_m16 = 0, lt_best_ratio = 1e9;
        // The read kernel over the same weight copies: what one launch that only reads these bytes
        // costs (ramp-up and tail included), the reachable end of this shape's row.
        double read_us = 0;
        for (const int m : widths) {
          auto problem_for = [&](int c, int rows, int first) {
            GemvProblem p;
            p.w = ws_w[c]->ptr;
            p.weight = fp8 ? GemvWeight::kFp8E4M3 : GemvWeight::kBf16;
            p.n = shape.n;
            p.k = shape.k;
            p.scale_kind = fp8 ? GemvScale::kBlock128 : GemvScale::kNone;
            p.scale = fp8 ? ws_s[c]->as<float>() : nullptr;
            p.x = ws_x[c]->as<uint16_t>() + static_cast<int64_t>(first) * shape.k;
            p.x_stride = shape.k;
            p.y = ws_y[c]->as<uint16_t>() + static_cast<int64_t>(first) * shape.n;
            p.y_stride = shape.n;
            p.m = rows;
            if (fused_norm && variants && rows <= 4) p.norm = GemvNormInput{norm_weight.as<float>(), 1e-6f};
            return p;
          };
          // The route a stock serve takes at this width, asked as the backend asks it (plan_linear in
          // ops/cuda/cuda_backend_linear.cpp): 17..32 rows take the one-pass 32-row tier where it is
          // built for the shape (lever ffn_batch32, on by default), else two 16-row halves.
          ops::LinearKernels avail{true, true, true, true};
          if (levers.batch32 && m > 16 && m <= 32)
            avail.gemv_batch32 = gemv_unsupported_reason(32, problem_for(0, m, 0), ws).empty();
          const ops::LinearRoute route = ops::choose_linear_arm(
              ops::Phase::kDecode, m,
              fp8 ? ops::LinearWeightKind::kFp8Block128 : ops::LinearWeightKind::kBf16, avail, levers);
          // Two 16-row launches on contiguous row halves, the first ceil(m / 2) (the seed's 17..32 form).
          const int first_half = (m + 1) / 2;
          auto halves = [&](int c, const GemvVariant& variant) {
            gemv_launch(16, problem_for(c, first_half, 0), ws, stream, variant);
            gemv_launch(16, problem_for(c, m - first_half, first_half), ws, stream, variant);
          };
          auto run_ours = [&](int c, const GemvVariant& variant) {
            switch (route.arm) {
              case ops::LinearArm::kGemv:
                gemv_launch(1, problem_for(c, m, 0), ws, stream, variant);
                break;
              case ops::LinearArm::kGemvBatch4:
                gemv_launch(4, problem_for(c, m, 0), ws, stream, variant);
                break;
              case ops::LinearArm::kGemvBatch16:
                gemv_launch(16, problem_for(c, m, 0), ws, stream, variant);
                break;
              case ops::LinearArm::kGemvBatch16Halves:
                halves(c, variant);
                break;
              case ops::LinearArm::kGemvBatch32:
                gemv_launch(32, problem_for(c, m, 0), ws, stream, variant);
                break;
              default:
                break;
            }
          };
          auto emit = [&](const char* impl, double us) {
            const double gbs = static_cast<double>(w_bytes) / (us * 1e-6) / 1e9;
            const std::string row = fmt::format("{:<12} {:<14} {:>6} {:>6} {:<5} {:>3} {:<18} {:>9.1f} {:>7.0f} {:>5.1f}%\n", shape.model,
                                 shape.name, shape.n, shape.k, fp8 ? "fp8" : "bf16", m, impl, us, gbs, 100.0 * gbs / ceiling);
            table += row;
            std::fputs(row.c_str(), stdout);  // progressively, so a timed-out run still reports
            std::fflush(stdout);
            return us;
          };
          // The step's residual-add RMSNorm writing x[c] (--after-norm): residual += delta, x = norm.
          auto norm = [&](int c) {
            launch_add_rms_norm(norm_residual.ptr, RowType::kBf16, shape.k, norm_delta.ptr, RowType::kBf16,
                                shape.k, m, shape.k, norm_weight.as<float>(), 1e-6f, ws_x[c]->ptr,
                                RowType::kBf16, shape.k, stream);
          };
          double norm_us = 0;
          if (after_norm) norm_us = emit("norm alone", time_graph(stream, copies, norm));
          if (m == widths.front()) {
            read_us = emit("read (same bytes)", time_graph(stream, copies, [&](int c) {
                             read_probe(ws_w[c]->ptr, w_bytes & ~size_t{15}, sink.as<unsigned>(), stream);
                           }));
          }
          // 17..32 rows: the form the route did not take, beside it: the two 16-row halves where the
          // route is the 32-row tier, the 32-row tier where the route is the halves and `variant`
          // builds it (--after-norm: the norm's time taken off).
          auto time_other_wide = [&](const std::string& label, const GemvVariant& variant) {
            std::function<void(int)> other;
            if (route.arm == ops::LinearArm::kGemvBatch32) {
              other = [&](int c) { halves(c, variant); };
            } else if (route.arm == ops::LinearArm::kGemvBatch16Halves &&
                       gemv_unsupported_reason(32, problem_for(0, m, 0), ws, variant).empty()) {
              other = [&](int c) { gemv_launch(32, problem_for(c, m, 0), ws, stream, variant); };
            } else {
              return;
            }
            other(0);  // first launch (function attributes) outside capture
            LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
            emit(label.c_str(), after_norm ? time_graph(stream, copies,
                                                        [&](int c) {
                                                          norm(c);
                                                          other(c);
                                                        }) -
                                                 norm_us
                                           : time_graph(stream, copies, other));
          };
          const std::string ours_name = ops::linear_arm_name(route.arm);
          double ours = 0;  // the default kernel's time
          if (variants) {
            double ring_us = 0;
            for (const std::string& vname : variant_list) {
              const GemvVariant variant = gemv_variant_from_name(vname);
              try {
                run_ours(0, variant);  // first launch (function attributes) outside capture
              } catch (const lathe::Error& e) {  // a configuration not built for this dtype: say so, go on
                std::printf("%-12s %-14s %6lld %6lld %-5s %3d v:%s not available: %s\n", shape.model, shape.name,
                            static_cast<long long>(shape.n), static_cast<long long>(shape.k), fp8 ? "fp8" : "bf16", m,
                            vname.c_str(), e.what());
                continue;
              }
              LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
              const double us = after_norm ? time_graph(stream, copies,
                                                        [&](int c) {
                                                          norm(c);
                                                          run_ours(c, variant);
                                                        }) -
                                                 norm_us
                                           : time_graph(stream, copies, [&](int c) { run_ours(c, variant); });
              if (variant.kernel == GemvKernel::kRegisterRing) ring_us = us;
              std::string name = fmt::format("v:{}", vname);
              if (m == 16) {
                // Outputs of this variant and of the register ring, same inputs (copy 0).
                std::vector<uint16_t> got(static_cast<size_t>(m * shape.n)), ref(got.size());
                run_ours(0, gemv_variant_from_name("ring"));
                LATHE_CUDA_CHECK(cudaMemcpyAsync(ref.data(), ws_y[0]->ptr, ref.size() * 2, cudaMemcpyDeviceToHost, stream));
                run_ours(0, variant);
                LATHE_CUDA_CHECK(cudaMemcpyAsync(got.data(), ws_y[0]->ptr, got.size() * 2, cudaMemcpyDeviceToHost, stream));
                LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
                const double err = normalized_error(got, ref);
                name += fmt::format(" err={:.1e}{}", err, err < 1e-2 ? "" : " MISMATCH");
              }
              emit(name.c_str(), us);
              if (vname == (fp8 ? ours_fp8 : ours_bf16)) {
                ours = us;
                if (m == 1) ours_m1 = us;
                if (m == 16) ours_m16 = us;
              }
              time_other_wide(fmt::format("v:{} {}", vname,
                                          route.arm == ops::LinearArm::kGemvBatch32 ? "halves" : "batch32"),
                              variant);
            }
            (void)ring_us;
          } else {
            const GemvVariant ours_variant = gemv_variant_from_name(fp8 ? ours_fp8 : ours_bf16);
            run_ours(0, ours_variant);  // first launch (function attributes) outside capture
            LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
            ours = emit(ours_name.c_str(), time_graph(stream, copies, [&](int c) { run_ours(c, ours_variant); }));
            if (m == 1) ours_m1 = ours;
            if (m == 16) ours_m16 = ours;
            time_other_wide(
                route.arm == ops::LinearArm::kGemvBatch32 ? "  gemv_batch16 x2 halves" : "  gemv_batch32",
                ours_variant);
            if (m == 1 || m == 4 || m == 16) {
              emit("  ring (old default)",
                   time_graph(stream, copies, [&](int c) { run_ours(c, gemv_variant_from_name("ring")); }));
            }
          }
          if (!peers) {
            // --no-peers: ours only
          } else if (fp8) {
            LtGemm lt(lt_ws.ptr, lt_ws_bytes, m);
            if (lt.available(LtKind::kFp8Tensor, shape.n, shape.k, false)) {
              const double peer = emit("cublaslt fp8", time_graph(stream, copies, [&](int c) {
                                         LtOperands o;
                                         o.w = ws_w[c]->ptr;
                                         o.x = ws_xq[c]->ptr;
                                         o.x_stride = shape.k;
                                         o.y = ws_y[c]->ptr;
                                         o.y_stride = shape.n;
                                         o.w_scale = unit_scale.as<float>();
                                         o.x_scale = unit_scale.as<float>();
                                         lt.run(LtKind::kFp8Tensor, m, shape.n, shape.k, o, stream);
                                       }));
              lt_best_ratio = std::min(lt_best_ratio, peer / ours);
            } else {
              table += fmt::format("{:<12} {:<14} fp8 m={} cublaslt fp8: {}\n", shape.model, shape.name, m,
                                   lt.plan_info(LtKind::kFp8Tensor, shape.n, shape.k, false));
            }
          } else {
            emit("cublas bf16", time_graph(stream, copies, [&](int c) {
                   const float alpha = 1.0f, beta = 0.0f;
                   LATHE_CUBLAS_CHECK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(shape.n), m,
                                                   static_cast<int>(shape.k), &alpha, ws_w[c]->ptr, CUDA_R_16BF,
                                                   static_cast<int>(shape.k), ws_x[c]->ptr, CUDA_R_16BF,
                                                   static_cast<int>(shape.k), &beta, ws_y[c]->ptr, CUDA_R_16BF,
                                                   static_cast<int>(shape.n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                 }));
          }
        }
        const auto pct = [&](double us) {
          return us > 0 ? 100.0 * (static_cast<double>(w_bytes) / (us * 1e-6) / 1e9) / ceiling : 0.0;
        };
        summary += fmt::format("{:<12} {:<14} {:<5} ours m=1 {:5.1f}%  m=16 {:5.1f}%  read {:5.1f}%{}\n", shape.model,
                               shape.name, fp8 ? "fp8" : "bf16", pct(ours_m1), pct(ours_m16), pct(read_us),
                               fp8 ? fmt::format("  min(cublaslt/ours) {:.2f}x", lt_best_ratio) : std::string());
      }
    }
    const std::string text = log + "\n" + table + "\nsummary (% of measured read ceiling; block128 scales for ours fp8)\n" + summary;
    std::fputs(("\nsummary\n" + summary).c_str(), stdout);
    if (!out_dir.empty()) {
      if (FILE* f = std::fopen((out_dir + "/kernels_bench.txt").c_str(), "w")) {
        std::fputs(text.c_str(), f);
        std::fclose(f);
      }
    }
    cublasDestroy(blas);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lathe_bench_kernels: %s\n", e.what());
    return 1;
  }
}
