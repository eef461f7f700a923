#pragma once
// Prefill-width linear layers through cuBLASLt: y[m, n] = x[m, k] . W[n, k]^T.
//
// Layout: W is cuBLASLt's A in the "TN" form (A stored k x n column-major = W row-major, op T),
// x is B (k x m column-major = x row-major, op N), y is D (n x m column-major = y row-major).
//
// Batch invariance: ONE algorithm is pinned per (kind, n, k, output type) on first use (the
// heuristic's choices for a reference m, with split-K forced off and the reduction scheme
// none), and that algorithm serves every m, so a row's result does not depend on how many rows
// share the call (tests/gpu/cuda/gemm_test asserts per-row bit equality for m = 33..512).
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include <cublasLt.h>

namespace lathe::cuda {

enum class LtKind {
  kBf16,        // bf16 x, bf16 W
  kFp8Tensor,   // fp8 x and W, one f32 scale each (device pointers); the benchmark's cuBLASLt peer
  kFp8Block,    // fp8 x with VEC128 scales (per token per 128 k), W with BLK128x128 scales
  kFp8Channel,  // fp8 x with one scale per token, W with one scale per output row (OUTER_VEC)
};
const char* lt_kind_name(LtKind kind);

// Where the scale tensors of kFp8Block live (see gemm_lt.cpp; tests/gpu/cuda/gemm_test proves
// the production layout against a host W8A8 reference with random scales):
//   activation scales: f32 [ceil(k/128), lt_act_scale_pitch(m)] (token index fastest),
//   weight scales:     f32 [ceil(n/128), ceil(k/128)] (the checkpoint's own layout) when
//                      ceil(k/128) % 4 == 0, which lt_block_supported() requires.
int64_t lt_act_scale_pitch(int64_t m);
// Row counts of the block-scaled (kFp8Block) route must be a multiple of this.
inline constexpr int64_t kLtBlockRowMultiple = 4;
bool lt_block_supported(int64_t n, int64_t k);

struct LtOperands {
  const void* w = nullptr;
  const void* x = nullptr;
  int64_t x_stride = 0;  // elements
  void* y = nullptr;
  int64_t y_stride = 0;  // elements
  bool y_f32 = false;
  const float* w_scale = nullptr;
  const float* x_scale = nullptr;
};

class LtGemm {
 public:
  // `reference_m`: the row count the heuristic is asked about when an algorithm is pinned
  // (production keeps the default; the benchmark's cuBLASLt peer pins one per m).
  LtGemm(void* workspace, size_t workspace_bytes, int64_t reference_m = 256);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Enqueues the product on `stream`. Throws lathe::Error when cuBLASLt has no algorithm for
  // the combination (callers then take the dequantize-to-bf16 route).
  void run(LtKind kind, int64_t m, int64_t n, int64_t k, const LtOperands& ops, cudaStream_t stream);

  // Pins (if not yet) and describes the algorithm for a shape: "algo 66 tile 12 stages 20 ...".
  std::string plan_info(LtKind kind, int64_t n, int64_t k, bool y_f32);
  // True when cuBLASLt offers an algorithm for the combination (pins it).
  bool available(LtKind kind, int64_t n, int64_t k, bool y_f32);

 private:
  struct Plan {
    bool ok = false;
    cublasLtMatmulAlgo_t algo{};
    std::string info;
  };
  using Key = std::tuple<int, int64_t, int64_t, bool>;
  Plan& plan(LtKind kind, int64_t n, int64_t k, bool y_f32);

  cublasLtHandle_t handle_ = nullptr;
  void* workspace_;
  size_t workspace_bytes_;
  int64_t reference_m_;
  std::map<Key, Plan> plans_;
};

// The best FLOP/s (2 m n k per product) of `runs` (at least 1) products timed one at a time with
// events on `stream`, after one untimed warm-up: how the benchmarks quote a cuBLASLt reference.
// Synchronizes `stream`; throws lathe::Error like run().
double lt_best_flops(LtGemm& lt, LtKind kind, int64_t m, int64_t n, int64_t k, const LtOperands& ops,
                     int runs, cudaStream_t stream);

}  // namespace lathe::cuda
