// Row-wise reference ops: embedding, RMSNorm (+ residual), QK-norm, RoPE, SwiGLU, row gather.
#include "backends/cpu/internal.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/parallel.h"

namespace lathe::cpu {
namespace detail {

void check_rows(const char* op, const char* what, const Rows& view, int64_t rows, int64_t cols) {
  if (!is_activation_dtype(view.dtype)) {
    fail("cpu {}: {} has dtype {} (expected F32, BF16 or F16)", op, what, dtype_name(view.dtype));
  }
  if (rows < 0 || cols < 0) fail("cpu {}: {} has negative size [{}, {}]", op, what, rows, cols);
  if (rows > 1 && view.stride < cols) fail("cpu {}: {} row stride {} < width {}", op, what, view.stride, cols);
  if (rows > 0 && cols > 0 && view.data == nullptr) fail("cpu {}: {} has no data", op, what);
}

int64_t rows_per_task(int64_t work_per_row, int64_t work_per_task) {
  return std::max<int64_t>(1, work_per_task / std::max<int64_t>(1, work_per_row));
}

}  // namespace detail

using detail::check_rows;
using detail::row_ptr;
using detail::rows_per_task;

namespace {

// y = weight * (x * inv_rms), inv_rms = 1 / sqrt(mean(x^2) + eps), in place on buf.
void normalize(float* buf, int64_t cols, const float* weight, float eps) {
  const float mean = dot(buf, buf, cols) / static_cast<float>(cols);
  const float inv = 1.0f / std::sqrt(mean + eps);
  for (int64_t c = 0; c < cols; ++c) buf[c] = (buf[c] * inv) * weight[c];
}

// For each row r (split over the workers): loads `load_cols` of in[r] as f32, calls fn(buf), and
// stores the buffer's first `store_cols` to out[r] (which may be in[r]).
template <class Fn>
void transform_rows(Rows in, Rows out, int64_t rows, int64_t load_cols, int64_t store_cols,
                    int64_t work_per_row, Fn fn) {
  parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> buf(static_cast<size_t>(load_cols));
        for (int64_t r = begin; r < end; ++r) {
          load_row(row_ptr(in, r), in.dtype, load_cols, buf.data());
          fn(buf.data());
          store_row(buf.data(), store_cols, row_ptr(out, r), out.dtype);
        }
      },
      rows_per_task(work_per_row));
}

}  // namespace

void embedding(const int32_t* ids, int64_t tokens, const void* table, DType table_dtype, int64_t vocab,
               int64_t hidden, const WeightScale& table_scale, Rows out) {
  check_rows("embedding", "out", out, tokens, hidden);
  for (int64_t t = 0; t < tokens; ++t) {
    if (ids[t] < 0 || ids[t] >= vocab) fail("cpu embedding: token id {} at row {} outside [0, {})", ids[t], t, vocab);
  }
  parallel_for(
      tokens,
      [&](int64_t begin, int64_t end) {
        std::vector<float> buf(static_cast<size_t>(hidden));
        for (int64_t t = begin; t < end; ++t) {
          decode_weight_row(table, table_dtype, hidden, ids[t], table_scale, buf.data());
          store_row(buf.data(), hidden, row_ptr(out, t), out.dtype);
        }
      },
      rows_per_task(hidden));
}

void rms_norm(Rows x, int64_t rows, int64_t cols, const float* weight, float eps, Rows out) {
  check_rows("rms_norm", "x", x, rows, cols);
  check_rows("rms_norm", "out", out, rows, cols);
  if (cols == 0) return;
  transform_rows(x, out, rows, cols, cols, cols, [&](float* buf) { normalize(buf, cols, weight, eps); });
}

void add_rms_norm(Rows residual, Rows delta, int64_t rows, int64_t cols, const float* weight, float eps, Rows out) {
  check_rows("add_rms_norm", "residual", residual, rows, cols);
  check_rows("add_rms_norm", "delta", delta, rows, cols);
  check_rows("add_rms_norm", "out", out, rows, cols);
  if (cols == 0) return;
  parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> sum(static_cast<size_t>(cols));
        std::vector<float> add(static_cast<size_t>(cols));
        for (int64_t r = begin; r < end; ++r) {
          load_row(row_ptr(residual, r), residual.dtype, cols, sum.data());
          load_row(row_ptr(delta, r), delta.dtype, cols, add.data());
          for (int64_t c = 0; c < cols; ++c) sum[c] += add[c];
          store_row(sum.data(), cols, row_ptr(residual, r), residual.dtype);
          // Normalise exactly what the residual stream now holds (rounded when not F32).
          load_row(row_ptr(residual, r), residual.dtype, cols, sum.data());
          normalize(sum.data(), cols, weight, eps);
          store_row(sum.data(), cols, row_ptr(out, r), out.dtype);
        }
      },
      rows_per_task(cols));
}

void head_rms_norm(Rows x, int64_t rows, int64_t num_heads, int64_t head_dim, const float* weight, float eps) {
  const int64_t cols = num_heads * head_dim;
  check_rows("head_rms_norm", "x", x, rows, cols);
  if (cols == 0) return;
  transform_rows(x, x, rows, cols, cols, cols, [&](float* buf) {
    for (int64_t h = 0; h < num_heads; ++h) normalize(buf + h * head_dim, head_dim, weight, eps);
  });
}

void rope(Rows x, int64_t rows, int64_t num_heads, int64_t head_dim, const int32_t* positions,
          const float* inv_freq, int64_t rotary_dim, float attention_scaling) {
  const int64_t cols = num_heads * head_dim;
  check_rows("rope", "x", x, rows, cols);
  if (rotary_dim < 0 || rotary_dim % 2 != 0 || rotary_dim > head_dim) {
    fail("cpu rope: rotary_dim {} must be even and within [0, head_dim {}]", rotary_dim, head_dim);
  }
  if (rotary_dim == 0 || cols == 0) return;
  const int64_t half = rotary_dim / 2;
  parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> buf(static_cast<size_t>(cols));
        std::vector<float> cos_v(static_cast<size_t>(half));
        std::vector<float> sin_v(static_cast<size_t>(half));
        for (int64_t r = begin; r < end; ++r) {
          const float position = static_cast<float>(positions[r]);
          for (int64_t i = 0; i < half; ++i) {
            const float angle = position * inv_freq[i];
            cos_v[static_cast<size_t>(i)] = std::cos(angle) * attention_scaling;
            sin_v[static_cast<size_t>(i)] = std::sin(angle) * attention_scaling;
          }
          load_row(row_ptr(x, r), x.dtype, cols, buf.data());
          for (int64_t h = 0; h < num_heads; ++h) {
            float* head = buf.data() + h * head_dim;
            for (int64_t i = 0; i < half; ++i) {
              const float x1 = head[i];
              const float x2 = head[i + half];
              const float c = cos_v[static_cast<size_t>(i)];
              const float s = sin_v[static_cast<size_t>(i)];
              head[i] = x1 * c - x2 * s;
              head[i + half] = x2 * c + x1 * s;
            }
          }
          store_row(buf.data(), cols, row_ptr(x, r), x.dtype);
        }
      },
      rows_per_task(cols * 4));
}

void silu_mul(Rows gate_up, int64_t rows, int64_t inter, Rows out) {
  check_rows("silu_mul", "gate_up", gate_up, rows, 2 * inter);
  check_rows("silu_mul", "out", out, rows, inter);
  if (inter == 0) return;
  transform_rows(gate_up, out, rows, 2 * inter, inter, inter * 8, [&](float* buf) {
    for (int64_t i = 0; i < inter; ++i) buf[i] = buf[i] / (1.0f + std::exp(-buf[i])) * buf[inter + i];
  });
}

void gather_rows(Rows x, int64_t x_rows, int64_t cols, const int32_t* indices, int64_t count, Rows out) {
  check_rows("gather_rows", "x", x, x_rows, cols);
  check_rows("gather_rows", "out", out, count, cols);
  for (int64_t i = 0; i < count; ++i) {
    if (indices[i] < 0 || indices[i] >= x_rows) {
      fail("cpu gather_rows: row index {} at {} outside [0, {})", indices[i], i, x_rows);
    }
  }
  std::vector<float> buf(static_cast<size_t>(cols));
  for (int64_t i = 0; i < count; ++i) {
    load_row(row_ptr(x, indices[i]), x.dtype, cols, buf.data());
    store_row(buf.data(), cols, row_ptr(out, i), out.dtype);
  }
}

}  // namespace lathe::cpu
