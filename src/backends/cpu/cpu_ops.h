#pragma once
// The CPU reference ops: plain functions over host memory described by raw pointers, sizes and
// strides (no model or op-API types; this layer sits below ops/). Every op computes in f32
// (f32 accumulation, f32 transcendental functions) and converts on load/store, so activations
// may be F32, BF16 or F16. Work is split with parallel_for over rows / output features / heads,
// and each output element's arithmetic is fixed by the code, never by the thread count or by
// which other rows are in the batch.
//
// Bad sizes, dtypes, ids or slots throw lathe::Error naming the op and the offending value.
#include <cstdint>

#include "core/dtype.h"

namespace lathe::cpu {

// Rows of a 2-D matrix in host memory: row r starts at data + r * stride elements of dtype.
// The row count and width are passed beside it.
struct Rows {
  void* data = nullptr;
  DType dtype = DType::kF32;
  int64_t stride = 0;  // elements between row starts
};

// Multiplier of a stored weight: W[r, c] = decode(Wq[r, c]) * data[(r / block_rows) * row_stride
// + (c / block_cols) * col_stride]. Per-tensor: strides 0. Per-channel: block_rows 1,
// row_stride 1, col_stride 0. Block 128x128 over K columns: block_rows = block_cols = 128,
// row_stride = ceil(K / 128), col_stride 1 (edge blocks are partial). data == nullptr: no scale.
struct WeightScale {
  const float* data = nullptr;
  int64_t block_rows = 1;
  int64_t block_cols = 1;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// A paged KV cache layer: K and V are each [num_blocks, num_kv_heads, block_size, head_dim] in
// `dtype` (F32, BF16, F16 or F8_E4M3; FP8 stores fp8(x / scale) and reads fp8 * scale).
struct PagedKv {
  void* k = nullptr;
  void* v = nullptr;
  DType dtype = DType::kF32;
  float k_scale = 1.0f;
  float v_scale = 1.0f;
  int32_t num_blocks = 0;
  int32_t block_size = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
};

// ---- conversions --------------------------------------------------------------------------
// True for the activation dtypes the CPU ops load and store (F32, BF16, F16).
bool is_activation_dtype(DType dtype);
// dst[i] = float(src[i]) for i < n; src in an activation dtype.
void load_row(const void* src, DType dtype, int64_t n, float* dst);
// dst[i] = dtype(src[i]) (round to nearest even) for i < n.
void store_row(const float* src, int64_t n, void* dst, DType dtype);
// dst[c] = W[row, c] for c < cols, from a row-major weight [*, cols] stored as F32, BF16, F16,
// F8_E4M3 or F8_E5M2 (FP8 via the 256-entry decode tables), times the scale when present:
// f32(decode(q) * s), one rounding.
void decode_weight_row(const void* weight, DType dtype, int64_t cols, int64_t row, const WeightScale& scale,
                       float* dst);

// Dot products in f32 with a fixed 8-lane accumulation order (lane j sums elements j, j+8, ...,
// lanes combined pairwise); vectorisable, and identical for every caller.
float dot(const float* a, const float* b, int64_t n);
// out[i] = dot(x, w[i], n) for i < 4, bit-identical to four dot() calls.
void dot4(const float* x, const float* const w[4], int64_t n, float out[4]);

// ---- elementwise and row ops --------------------------------------------------------------
// out[t, :] = table[ids[t], :] for t < tokens; table [vocab, hidden] in any decode_weight_row
// dtype. An id outside [0, vocab) is an error.
void embedding(const int32_t* ids, int64_t tokens, const void* table, DType table_dtype, int64_t vocab,
               int64_t hidden, const WeightScale& table_scale, Rows out);

// out = weight * (x / sqrt(mean(x^2) + eps)) per row; weight f32 [cols]. out may alias x.
void rms_norm(Rows x, int64_t rows, int64_t cols, const float* weight, float eps, Rows out);

// residual += delta (stored back in residual's dtype), then out = rms_norm(stored residual).
// out may alias residual or delta row for row.
void add_rms_norm(Rows residual, Rows delta, int64_t rows, int64_t cols, const float* weight, float eps, Rows out);

// In place: each of num_heads head_dim-wide slices of every row is RMS-normalised with the
// shared f32 weight [head_dim] (Qwen3 QK-norm).
void head_rms_norm(Rows x, int64_t rows, int64_t num_heads, int64_t head_dim, const float* weight, float eps);

// In place rotary embedding of every head of every row at positions[row]: with
// half = rotary_dim / 2, angle_i = float(position) * inv_freq[i] (f32), c = cos(angle) * scaling,
// s = sin(angle) * scaling: x[i] <- x[i] c - x[i+half] s, x[i+half] <- x[i+half] c + x[i] s for
// i < half; dims >= rotary_dim pass through. rotary_dim must be even and <= head_dim.
void rope(Rows x, int64_t rows, int64_t num_heads, int64_t head_dim, const int32_t* positions,
          const float* inv_freq, int64_t rotary_dim, float attention_scaling);

// out[t, i] = silu(gate_up[t, i]) * gate_up[t, inter + i], silu(g) = g / (1 + exp(-g)).
void silu_mul(Rows gate_up, int64_t rows, int64_t inter, Rows out);

// out[i, :] = x[indices[i], :] for i < count (dtype converted when they differ); an index
// outside [0, x_rows) is an error.
void gather_rows(Rows x, int64_t x_rows, int64_t cols, const int32_t* indices, int64_t count, Rows out);

// ---- linear -------------------------------------------------------------------------------
// out[m, n] = sum_k x[m, k] * W[n, k] (+ bias[n]) for m < rows, n < out_features; W row-major
// [out_features, in_features] in any decode_weight_row dtype, dequantised on the fly (W8A16
// semantics for FP8: activations are used as given). f32 accumulation via dot4. out must not
// overlap x.
void linear(Rows x, int64_t rows, int64_t in_features, const void* weight, DType weight_dtype, int64_t out_features,
            const WeightScale& scale, const float* bias, Rows out);

// ---- paged KV cache and attention ---------------------------------------------------------
// Writes k[t] and v[t] (rows of num_kv_heads * head_dim) into slot slot_mapping[t] =
// block * block_size + offset; a negative slot is skipped (padding rows).
void kv_write(Rows k, Rows v, int64_t tokens, const int32_t* slot_mapping, const PagedKv& cache);

// max |x[r, c]| over r < rows, c < cols, as f32: the magnitudes' bit patterns (sign cleared)
// are compared as unsigned integers, which orders every non-negative float by value and puts
// NaN above +inf, so a NaN anywhere gives a NaN. Exact and independent of the thread count
// (the KV-scale calibration's amax; the CUDA kernel computes the same bits). 0 when empty.
float abs_max(Rows x, int64_t rows, int64_t cols);

// Causal paged attention over a batch of num_seqs sequences: sequence s owns query rows
// [query_start[s], query_start[s+1]) and, after this step's kv_write, context_lens[s] cached
// positions listed by block_tables[s * max_blocks_per_seq + p / block_size]. Its i-th query row
// attends to positions [0, context_len - query_len + i]. Query head j uses KV head
// j / (num_heads / num_kv_heads). Scores q.k * scale, softmax in f32 with max subtraction,
// out = sum_p exp(s_p - max) v_p / sum_p exp(s_p - max).
void paged_attention(Rows q, Rows out, int32_t num_seqs, const int32_t* query_start, const int32_t* context_lens,
                     const int32_t* block_tables, int32_t max_blocks_per_seq, int32_t num_heads, float scale,
                     const PagedKv& cache);

// ---- sampling -----------------------------------------------------------------------------
// One token from logits f32 [vocab] by the rule of ops/sampling.h: temperature == 0 gives the
// argmax (lowest index on ties); otherwise softmax(logits / temperature) in f32, candidates by p
// descending (ties: lower index), keep top_k (<= 0: all), then the shortest prefix whose mass
// reaches top_p (top_p >= 1: all; at least one), then drop p < min_p * p_max; pick the first
// candidate whose cumulative kept mass exceeds u * kept_total (u in [0, 1)).
int32_t sample_row(const float* logits, int64_t vocab, float temperature, int32_t top_k, float top_p, float min_p,
                   float u);

// Index of the largest value, lowest index on ties (NaN never wins).
int32_t argmax(const float* values, int64_t n);

}  // namespace lathe::cpu
