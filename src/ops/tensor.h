#pragma once
// Plain views the backend-neutral op API passes around. They own nothing; pointers live in the
// backend's memory (host memory for the CPU backend, device memory for CUDA).
#include <cstdint>

#include "core/dtype.h"

namespace lathe::ops {

enum class DeviceKind { kCpu, kCuda };

// Which side of serving a linear/attention call belongs to. Dispatch keys on it as well as on
// the row count, so a prefill chunk's short tail never takes a decode arm (ARCHITECTURE rule 7).
enum class Phase { kPrefill, kDecode };

// A 2-D activation [rows, cols]; `stride` is the distance between rows in elements (>= cols).
struct Act {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;

  // Rows [first, first + count) of this view.
  Act slice_rows(int64_t first, int64_t count) const;
  // Columns [first, first + count) of every row.
  Act slice_cols(int64_t first, int64_t count) const;
};

// How an FP8 weight's scale multiplies it: W[n,k] = fp8(Wq[n,k]) * s, with s
//   kPerTensor: s[0]; kPerChannel: s[n]; kBlock128: s[(n/128) * ceil(K/128) + k/128].
enum class ScaleKind { kNone, kPerTensor, kPerChannel, kBlock128 };

const char* scale_kind_name(ScaleKind kind);

// A linear layer's weight W [rows = N out features, cols = K in features], row-major, in its
// stored type (BF16, F16, F32 or F8_E4M3). y = x . W^T (+ bias).
struct WeightView {
  const void* data = nullptr;
  DType dtype = DType::kBF16;
  int64_t rows = 0;
  int64_t cols = 0;
  ScaleKind scale_kind = ScaleKind::kNone;
  const float* scale = nullptr;  // f32, layout per scale_kind (null when kNone)
  const float* bias = nullptr;   // f32 [rows] or null
};

// Number of f32 scale values a weight of this shape and kind carries.
int64_t scale_count(ScaleKind kind, int64_t rows, int64_t cols);

}  // namespace lathe::ops
