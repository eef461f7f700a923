#include "backends/cuda/gemm_lt.h"

#include <fmt/format.h>

#include <algorithm>

#include "backends/cuda/check.h"
#include "core/error.h"
#include "core/log.h"

namespace lathe::cuda {
namespace {

// Owns the descriptors of one product (cuBLASLt reads them when the call is enqueued).
struct Descriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  ~Descriptors() {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

void describe(LtKind kind, int64_t m, int64_t n, int64_t k, int64_t x_stride, int64_t y_stride, bool y_f32,
              Descriptors& d) {
  const cudaDataType_t ab = kind == LtKind::kBf16 ? CUDA_R_16BF : CUDA_R_8F_E4M3;
  const cudaDataType_t out = y_f32 ? CUDA_R_32F : CUDA_R_16BF;
  LATHE_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
  LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
  int32_t a_mode = -1, b_mode = -1;
  if (kind == LtKind::kFp8Block) {
    a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  } else if (kind == LtKind::kFp8Channel) {
    a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  }
  if (a_mode >= 0) {
    LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode, sizeof a_mode));
    LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode, sizeof b_mode));
  }
  LATHE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.a, ab, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k));
  LATHE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.b, ab, static_cast<uint64_t>(k), static_cast<uint64_t>(m), x_stride));
  LATHE_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.c, out, static_cast<uint64_t>(n), static_cast<uint64_t>(m), y_stride));
}

template <typename T>
T algo_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  // Read for logs and the split-K test only; an attribute an algorithm does not report reads 0.
  T value{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS)
    value = T{};
  return value;
}

}  // namespace

const char* lt_kind_name(LtKind kind) {
  switch (kind) {
    case LtKind::kBf16:
      return "bf16";
    case LtKind::kFp8Tensor:
      return "fp8-w8a8-tensor";
    case LtKind::kFp8Block:
      return "fp8-w8a8-block128";
    case LtKind::kFp8Channel:
      return "fp8-w8a8-channel";
  }
  return "?";
}

int64_t lt_act_scale_pitch(int64_t m) { return (m + 3) / 4 * 4; }

// Proven shapes only: whole 128-row blocks (the tests cover no partial block) and K blocks in
// multiples of 4 (cuBLASLt rejects others).
bool lt_block_supported(int64_t n, int64_t k) { return n > 0 && n % 128 == 0 && k % 128 == 0 && (k / 128) % 4 == 0; }

LtGemm::LtGemm(void* workspace, size_t workspace_bytes, int64_t reference_m)
    : workspace_(workspace), workspace_bytes_(workspace_bytes), reference_m_(reference_m) {
  LATHE_CUBLAS_CHECK(cublasLtCreate(&handle_));
}

LtGemm::~LtGemm() {
  if (handle_) cublasLtDestroy(handle_);
}

LtGemm::Plan& LtGemm::plan(LtKind kind, int64_t n, int64_t k, bool y_f32) {
  const Key key{static_cast<int>(kind), n, k, y_f32};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  Plan& p = plans_[key];
  Descriptors ref;
  describe(kind, reference_m_, n, k, k, n, y_f32, ref);
  // Vector scale modes are rejected (INVALID_VALUE) while their pointers are null; any device
  // address will do for the query.
  auto set_dummy_scales = [&](Descriptors& d) {
    if (kind == LtKind::kBf16) return;
    const void* dummy = workspace_;
    LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dummy, sizeof dummy));
    LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dummy, sizeof dummy));
  };
  set_dummy_scales(ref);
  cublasLtMatmulPreference_t pref = nullptr;
  LATHE_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  LATHE_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                         &workspace_bytes_, sizeof workspace_bytes_));
  cublasLtMatmulHeuristicResult_t results[16] = {};
  int count = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, ref.op, ref.a, ref.b, ref.c, ref.c, pref, 16, results, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || count == 0) {
    p.info = fmt::format("no cuBLASLt algorithm ({})", cublasGetStatusName(status));
    return p;
  }
  // First candidate that still runs with split-K off, for both a single row and many rows.
  std::string rejected;
  for (int i = 0; i < count && !p.ok; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    cublasLtMatmulAlgo_t algo = results[i].algo;
    // Force split-K off only where the candidate uses it: rewriting the config of a candidate
    // that does not split (the block-scaled kernels among them) can make it fail the check.
    if (algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM) > 1) {
      const uint32_t one = 1, none = CUBLASLT_REDUCTION_SCHEME_NONE;
      LATHE_CUBLAS_CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &one, sizeof one));
      LATHE_CUBLAS_CHECK(
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &none, sizeof none));
    }
    bool fits = true;
    // The block-scaled kernels take row counts in multiples of 4 only (the activation scales'
    // pitch; cuBLASLt answers NOT_SUPPORTED for m = 1), so that route is checked at 4.
    const int64_t fewest = kind == LtKind::kFp8Block ? kLtBlockRowMultiple : 1;
    for (int64_t m : {fewest, int64_t{4096}}) {
      Descriptors d;
      describe(kind, m, n, k, k, n, y_f32, d);
      set_dummy_scales(d);
      cublasLtMatmulHeuristicResult_t check{};
      const cublasStatus_t st = cublasLtMatmulAlgoCheck(handle_, d.op, d.a, d.b, d.c, d.c, &algo, &check);
      if (st != CUBLAS_STATUS_SUCCESS || check.workspaceSize > workspace_bytes_) {
        if (fits) {
          rejected += fmt::format(" [candidate {} algo {} splitk {}: m={} {}]", i,
                                  algo_config<int32_t>(results[i].algo, CUBLASLT_ALGO_CONFIG_ID),
                                  algo_config<uint32_t>(results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), m,
                                  st != CUBLAS_STATUS_SUCCESS ? cublasGetStatusName(st) : "workspace too large");
        }
        fits = false;
      }
    }
    if (!fits) continue;
    p.ok = true;
    p.algo = algo;
    p.info = fmt::format("cuBLASLt {} n={} k={} -> algo {} tile {} stages {} splitk {} (candidate {} of {})",
                         lt_kind_name(kind), n, k, algo_config<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID),
                         algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                         algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                         algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), i, count);
  }
  if (!p.ok)
    p.info = fmt::format("cuBLASLt {} n={} k={}: no candidate runs with split-K off at m=1 (4 if block-scaled) and "
                         "m=4096 ({} candidates:{})",
                         lt_kind_name(kind), n, k, count, rejected);
  spdlog::info("gemm pin (reference m={}): {}", reference_m_, p.info);
  return p;
}

bool LtGemm::available(LtKind kind, int64_t n, int64_t k, bool y_f32) { return plan(kind, n, k, y_f32).ok; }

std::string LtGemm::plan_info(LtKind kind, int64_t n, int64_t k, bool y_f32) { return plan(kind, n, k, y_f32).info; }

void LtGemm::run(LtKind kind, int64_t m, int64_t n, int64_t k, const LtOperands& ops, cudaStream_t stream) {
  if (m <= 0) return;
  Plan& p = plan(kind, n, k, ops.y_f32);
  if (!p.ok) fail("linear n={} k={} m={}: {}", n, k, m, p.info);
  if (kind == LtKind::kFp8Block && m % kLtBlockRowMultiple != 0)
    fail("linear n={} k={} m={}: the block-scaled cuBLASLt route needs a multiple of {} rows", n, k, m,
         kLtBlockRowMultiple);
  Descriptors d;
  describe(kind, m, n, k, ops.x_stride, ops.y_stride, ops.y_f32, d);
  if (kind != LtKind::kBf16) {
    LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &ops.w_scale,
                                                      sizeof ops.w_scale));
    LATHE_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &ops.x_scale,
                                                      sizeof ops.x_scale));
  }
  const float alpha = 1.0f, beta = 0.0f;
  LATHE_CUBLAS_CHECK(cublasLtMatmul(handle_, d.op, &alpha, ops.w, d.a, ops.x, d.b, &beta, ops.y, d.c, ops.y, d.c,
                                    &p.algo, workspace_, workspace_bytes_, stream));
}

double lt_best_flops(LtGemm& lt, LtKind kind, int64_t m, int64_t n, int64_t k, const LtOperands& ops,
                     int runs, cudaStream_t stream) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
  } ev;
  LATHE_CUDA_CHECK(cudaEventCreate(&ev.start));
  LATHE_CUDA_CHECK(cudaEventCreate(&ev.stop));
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  lt.run(kind, m, n, k, ops, stream);
  double best = 0.0;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    LATHE_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    lt.run(kind, m, n, k, ops, stream);
    LATHE_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    LATHE_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float ms = 0.0f;
    LATHE_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    if (ms > 0.0f) best = std::max(best, flops / (static_cast<double>(ms) * 1e-3));
  }
  return best;
}

}  // namespace lathe::cuda
