#pragma once
// The dense-GEMM reference a prefill's FLOP/s is quoted against, measured in the run that quotes
// it: cuBLASLt (the heuristic's first algorithm that runs with split-K off, as lathe pins them)
// on a square 8192 x 8192 x 8192 product, BF16 and W8A8 with 128-block scales (the FP8
// checkpoints' route), BF16 out, on finite random operands; one warm-up, then `runs` timed
// products each, the best counts. It is both the ceiling (what this GPU's library reaches on an
// ideal shape) and the peer (the library lathe's prefill linears call, there on smaller and
// skinnier shapes, with the activation quantization before each FP8 product).
#include <optional>
#include <string>

#include "ops/backend.h"

namespace lathe::app {

struct GemmCeiling {
  double bf16_flops_per_s = 0.0;
  double fp8_block_flops_per_s = 0.0;  // 0 when cuBLASLt offers no block-scaled algorithm
  std::string description;             // one line for the report
};

// nullopt when the backend has no device to measure (CPU, or a build without CUDA).
std::optional<GemmCeiling> measure_gemm_ceiling(ops::Backend& backend, int runs = 10);

}  // namespace lathe::app
