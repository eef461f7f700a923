// The reference linear layer y = x . W^T (+ b) for BF16, F16, F32 and FP8 weights.
//
// Weights are dequantised block by block into f32 scratch (W8A16 for FP8: w = f32(fp8(q) * s))
// and every output element is one dot4 lane: a fixed 8-lane f32 accumulation over the
// contiguous k axis. Blocking (n_block weight rows x m_block activation rows, sized to stay in
// L2) and threading change only which element is computed when, never its arithmetic, so a
// row's result is the same whatever else is in the batch and however many threads run.
#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/internal.h"
#include "core/error.h"
#include "core/numeric.h"
#include "core/parallel.h"

namespace lathe::cpu {
namespace {

constexpr int64_t kTile = 4;                // weight rows per dot4
constexpr int64_t kBlockBytes = 256 * 1024;  // f32 bytes of decoded weights / activations per block
// Up to this many activation rows an unscaled BF16 weight is read in place (dot4_bf16) instead
// of being decoded to f32 first: the decode pass would not be amortised. Bit-identical either way.
constexpr int64_t kDirectBf16MaxRows = 2;

inline void store_value(char* row, DType dtype, int64_t index, float value) {
  switch (dtype) {
    case DType::kF32:
      reinterpret_cast<float*>(row)[index] = value;
      return;
    case DType::kBF16:
      reinterpret_cast<bf16*>(row)[index] = to_bf16(value);
      return;
    default:
      reinterpret_cast<f16*>(row)[index] = to_f16(value);
      return;
  }
}

}  // namespace

void linear(Rows x, int64_t rows, int64_t in_features, const void* weight, DType weight_dtype, int64_t out_features,
            const WeightScale& scale, const float* bias, Rows out) {
  detail::check_rows("linear", "x", x, rows, in_features);
  detail::check_rows("linear", "out", out, rows, out_features);
  if (rows == 0 || out_features == 0) return;
  if (weight == nullptr && in_features > 0) fail("cpu linear: weight [{}, {}] has no data", out_features, in_features);
  const int64_t k = in_features;

  // Activations as contiguous f32 [rows, k].
  const float* xf = nullptr;
  std::vector<float> x_storage;
  if (x.dtype == DType::kF32 && (x.stride == k || rows == 1)) {
    xf = static_cast<const float*>(x.data);
  } else {
    x_storage.resize(static_cast<size_t>(rows * k));
    parallel_for(
        rows,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) load_row(detail::row_ptr(x, r), x.dtype, k, x_storage.data() + r * k);
        },
        detail::rows_per_task(k));
    xf = x_storage.data();
  }

  const int64_t row_bytes = std::max<int64_t>(1, k) * static_cast<int64_t>(sizeof(float));
  const int64_t n_block = std::clamp<int64_t>((kBlockBytes / row_bytes) / kTile * kTile, kTile, 64);
  const int64_t m_block = std::max<int64_t>(1, kBlockBytes / row_bytes);
  const int64_t num_n_blocks = (out_features + n_block - 1) / n_block;
  const int64_t work_per_block = n_block * std::max<int64_t>(1, k) * rows;
  const bool direct_bf16 = weight_dtype == DType::kBF16 && scale.data == nullptr && rows <= kDirectBf16MaxRows;
  // Writes the `live` leading results of a tile to out[m, n_first ...], adding the bias.
  const auto store_tile = [&](int64_t m, int64_t n_first, int64_t live, const float* result) {
    char* out_row = detail::row_ptr(out, m);
    for (int64_t j = 0; j < live; ++j) {
      const int64_t n = n_first + j;
      store_value(out_row, out.dtype, n, bias != nullptr ? result[j] + bias[n] : result[j]);
    }
  };

  parallel_for(
      num_n_blocks,
      [&](int64_t block_begin, int64_t block_end) {
        std::vector<float> w_storage(direct_bf16 ? 0 : static_cast<size_t>(n_block * k));
        for (int64_t block = block_begin; block < block_end; ++block) {
          const int64_t n0 = block * n_block;
          const int64_t count = std::min(out_features, n0 + n_block) - n0;
          if (direct_bf16) {
            const auto* w_bits = static_cast<const uint16_t*>(weight);
            for (int64_t t0 = 0; t0 < count; t0 += kTile) {
              const uint16_t* w[kTile];
              for (int64_t j = 0; j < kTile; ++j) w[j] = w_bits + (n0 + std::min(t0 + j, count - 1)) * k;
              const int64_t live = std::min(kTile, count - t0);
              for (int64_t m = 0; m < rows; ++m) {
                float result[kTile];
                detail::dot4_bf16(xf + m * k, w, k, result);
                store_tile(m, n0 + t0, live, result);
              }
            }
            continue;
          }
          // Decode the block's weight rows once; reuse them for every activation row.
          for (int64_t i = 0; i < count; ++i) {
            decode_weight_row(weight, weight_dtype, k, n0 + i, scale, w_storage.data() + i * k);
          }
          for (int64_t m0 = 0; m0 < rows; m0 += m_block) {
            const int64_t m1 = std::min(rows, m0 + m_block);
            for (int64_t t0 = 0; t0 < count; t0 += kTile) {
              // A short last tile repeats its last row; the extra lanes are discarded.
              const float* w[kTile];
              for (int64_t j = 0; j < kTile; ++j) w[j] = w_storage.data() + std::min(t0 + j, count - 1) * k;
              const int64_t live = std::min(kTile, count - t0);
              for (int64_t m = m0; m < m1; ++m) {
                float result[kTile];
                dot4(xf + m * k, w, k, result);
                store_tile(m, n0 + t0, live, result);
              }
            }
          }
        }
      },
      std::max<int64_t>(1, (int64_t{1} << 18) / work_per_block));
}

}  // namespace lathe::cpu
