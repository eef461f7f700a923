// CpuBackend: the op API on host memory, binding each op to the raw reference ops of
// backends/cpu. Memory is aligned host memory, uploads and downloads are memcpy, and every op
// runs synchronously on the calling thread (plus parallel_for workers).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ops/backend.h"

namespace lathe::ops {
namespace {

constexpr size_t kAlignment = 64;

cpu::Rows rows_of(const Act& act) { return cpu::Rows{act.data, act.dtype, act.stride}; }

// Shape check of an Act argument; errors name the op and the argument.
void expect_shape(const char* op, const char* what, const Act& act, int64_t rows, int64_t cols) {
  if (act.rows != rows || act.cols != cols) {
    fail("cpu {}: {} is [{}, {}], expected [{}, {}]", op, what, act.rows, act.cols, rows, cols);
  }
  if (act.rows > 1 && act.stride < act.cols) fail("cpu {}: {} stride {} < cols {}", op, what, act.stride, act.cols);
}

void expect_cols(const char* op, const char* what, const Act& act, int64_t cols) {
  expect_shape(op, what, act, act.rows, cols);
}

cpu::WeightScale scale_of(const WeightView& weight) {
  cpu::WeightScale scale;
  scale.data = weight.scale;
  switch (weight.scale_kind) {
    case ScaleKind::kNone:
      scale.data = nullptr;
      break;
    case ScaleKind::kPerTensor:
      break;  // strides 0: s[0]
    case ScaleKind::kPerChannel:
      scale.row_stride = 1;
      break;
    case ScaleKind::kBlock128:
      scale.block_rows = 128;
      scale.block_cols = 128;
      scale.row_stride = (weight.cols + 127) / 128;
      scale.col_stride = 1;
      break;
  }
  if (weight.scale_kind != ScaleKind::kNone && weight.scale == nullptr) {
    fail("cpu: weight [{}, {}] has scale kind {} but no scale data", weight.rows, weight.cols,
         scale_kind_name(weight.scale_kind));
  }
  return scale;
}

cpu::PagedKv paged_kv(const KvCacheShape& shape, const KvCacheLayer& layer) {
  cpu::PagedKv kv;
  kv.k = layer.k;
  kv.v = layer.v;
  kv.dtype = shape.dtype;
  kv.k_scale = layer.k_scale;
  kv.v_scale = layer.v_scale;
  kv.num_blocks = shape.num_blocks;
  kv.block_size = shape.block_size;
  kv.num_kv_heads = shape.num_kv_heads;
  kv.head_dim = shape.head_dim;
  return kv;
}

class CpuBackend final : public Backend {
 public:
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  std::string name() const override { return "cpu"; }
  DType activation_dtype() const override { return DType::kF32; }

  void* alloc(size_t bytes) override {
    if (bytes > SIZE_MAX - kAlignment) fail("cpu: cannot allocate {} bytes", bytes);
    const size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    void* ptr = std::aligned_alloc(kAlignment, rounded);
    if (ptr == nullptr) fail("cpu: out of host memory allocating {} bytes", bytes);
    return ptr;
  }
  void free(void* ptr) override { std::free(ptr); }
  void upload(void* dst, const void* host_src, size_t bytes) override {
    if (bytes > 0) std::memmove(dst, host_src, bytes);
  }
  void download(void* host_dst, const void* src, size_t bytes) override {
    if (bytes > 0) std::memmove(host_dst, src, bytes);
  }
  void fill_zero(void* dst, size_t bytes) override {
    if (bytes > 0) std::memset(dst, 0, bytes);
  }
  void synchronize() override {}

  DeviceBatch upload_batch(const ForwardBatch& batch) override {
    const int32_t tokens = batch.num_tokens();
    const int32_t seqs = batch.num_seqs();
    if (static_cast<int32_t>(batch.positions.size()) != tokens ||
        static_cast<int32_t>(batch.slot_mapping.size()) != tokens) {
      fail("cpu upload_batch: positions ({}) and slot_mapping ({}) must have one entry per token ({})",
           batch.positions.size(), batch.slot_mapping.size(), tokens);
    }
    if (static_cast<int32_t>(batch.query_start.size()) != seqs + 1) {
      fail("cpu upload_batch: query_start has {} entries, expected num_seqs + 1 = {}", batch.query_start.size(),
           seqs + 1);
    }
    if (batch.query_start.front() != 0 || batch.query_start.back() != tokens) {
      fail("cpu upload_batch: query_start must run from 0 to num_tokens {}", tokens);
    }
    if (batch.max_blocks_per_seq < 0 ||
        static_cast<int64_t>(batch.block_tables.size()) != static_cast<int64_t>(seqs) * batch.max_blocks_per_seq) {
      fail("cpu upload_batch: block_tables has {} entries, expected {} x {}", batch.block_tables.size(), seqs,
           batch.max_blocks_per_seq);
    }
    for (int32_t row : batch.logits_rows) {
      if (row < 0 || row >= tokens) fail("cpu upload_batch: logits row {} outside [0, {})", row, tokens);
    }
    batch_ = batch;
    return device_batch(batch_, {batch_.token_ids.data(), batch_.positions.data(), batch_.slot_mapping.data(),
                                 batch_.query_start.data(), batch_.context_lens.data(), batch_.block_tables.data(),
                                 batch_.logits_rows.data()});
  }

  void embedding(const DeviceBatch& batch, const WeightView& table, Act out) override {
    expect_shape("embedding", "out", out, batch.num_tokens, table.cols);
    cpu::embedding(batch.token_ids, batch.num_tokens, table.data, table.dtype, table.rows, table.cols,
                   scale_of(table), rows_of(out));
  }

  void rms_norm(Act x, const float* weight, float eps, Act out) override {
    expect_shape("rms_norm", "out", out, x.rows, x.cols);
    cpu::rms_norm(rows_of(x), x.rows, x.cols, weight, eps, rows_of(out));
  }

  void add_rms_norm(Act residual, Act delta, const float* weight, float eps, Act out) override {
    expect_shape("add_rms_norm", "delta", delta, residual.rows, residual.cols);
    expect_shape("add_rms_norm", "out", out, residual.rows, residual.cols);
    cpu::add_rms_norm(rows_of(residual), rows_of(delta), residual.rows, residual.cols, weight, eps, rows_of(out));
  }

  void linear(Phase /*phase: one arm on the CPU*/, Act x, const WeightView& weight, Act out) override {
    expect_cols("linear", "x", x, weight.cols);
    expect_shape("linear", "out", out, x.rows, weight.rows);
    cpu::linear(rows_of(x), x.rows, weight.cols, weight.data, weight.dtype, weight.rows, scale_of(weight),
                weight.bias, rows_of(out));
  }

  void qk_norm_rope_kv_write(const DeviceBatch& batch, Act q, Act k, Act v, const float* q_norm, const float* k_norm,
                             float eps, const RopeParams& rope, const AttentionShape& shape,
                             const KvCacheShape& cache_shape, const KvCacheLayer& cache) override {
    check_attention_shape("qk_norm_rope_kv_write", shape, cache_shape);
    const int64_t tokens = batch.num_tokens;
    expect_shape("qk_norm_rope_kv_write", "q", q, tokens, int64_t{shape.num_heads} * shape.head_dim);
    expect_shape("qk_norm_rope_kv_write", "k", k, tokens, int64_t{shape.num_kv_heads} * shape.head_dim);
    expect_shape("qk_norm_rope_kv_write", "v", v, tokens, int64_t{shape.num_kv_heads} * shape.head_dim);
    if (q_norm != nullptr) cpu::head_rms_norm(rows_of(q), tokens, shape.num_heads, shape.head_dim, q_norm, eps);
    if (k_norm != nullptr) cpu::head_rms_norm(rows_of(k), tokens, shape.num_kv_heads, shape.head_dim, k_norm, eps);
    if (rope.rotary_dim > 0) {
      if (rope.inv_freq == nullptr) fail("cpu qk_norm_rope_kv_write: rotary_dim {} without inv_freq", rope.rotary_dim);
      cpu::rope(rows_of(q), tokens, shape.num_heads, shape.head_dim, batch.positions, rope.inv_freq, rope.rotary_dim,
                rope.attention_scaling);
      cpu::rope(rows_of(k), tokens, shape.num_kv_heads, shape.head_dim, batch.positions, rope.inv_freq,
                rope.rotary_dim, rope.attention_scaling);
    }
    cpu::kv_write(rows_of(k), rows_of(v), tokens, batch.slot_mapping, paged_kv(cache_shape, cache));
  }

  void attention(const DeviceBatch& batch, Act q, const AttentionShape& shape, const KvCacheShape& cache_shape,
                 const KvCacheLayer& cache, Act out) override {
    check_attention_shape("attention", shape, cache_shape);
    const int64_t cols = int64_t{shape.num_heads} * shape.head_dim;
    expect_shape("attention", "q", q, batch.num_tokens, cols);
    expect_shape("attention", "out", out, batch.num_tokens, cols);
    cpu::paged_attention(rows_of(q), rows_of(out), batch.num_seqs, batch.query_start, batch.context_lens,
                         batch.block_tables, batch.max_blocks_per_seq, shape.num_heads, shape.scale,
                         paged_kv(cache_shape, cache));
  }

  void kv_amax(Act k, Act v, float* amax) override {
    if (amax == nullptr) fail("cpu kv_amax: no output");
    amax[0] = cpu::abs_max(rows_of(k), k.rows, k.cols);
    amax[1] = cpu::abs_max(rows_of(v), v.rows, v.cols);
  }

  void kv_write(const DeviceBatch& batch, Act k, Act v, const KvCacheShape& cache_shape,
                const KvCacheLayer& cache) override {
    const int64_t cols = int64_t{cache_shape.num_kv_heads} * cache_shape.head_dim;
    expect_shape("kv_write", "k", k, batch.num_tokens, cols);
    expect_shape("kv_write", "v", v, batch.num_tokens, cols);
    cpu::kv_write(rows_of(k), rows_of(v), batch.num_tokens, batch.slot_mapping, paged_kv(cache_shape, cache));
  }

  void silu_mul(Act gate_up, Act out) override {
    if (gate_up.cols % 2 != 0) fail("cpu silu_mul: gate_up has odd width {}", gate_up.cols);
    expect_shape("silu_mul", "out", out, gate_up.rows, gate_up.cols / 2);
    cpu::silu_mul(rows_of(gate_up), gate_up.rows, gate_up.cols / 2, rows_of(out));
  }

  void gather_logits_rows(const DeviceBatch& batch, Act x, Act out) override {
    expect_shape("gather_logits_rows", "out", out, batch.num_logits_rows, x.cols);
    cpu::gather_rows(rows_of(x), x.rows, x.cols, batch.logits_rows, batch.num_logits_rows, rows_of(out));
  }

  void sample(Act logits, const std::vector<SamplingParams>& params, int32_t* out_ids) override {
    if (static_cast<int64_t>(params.size()) != logits.rows) {
      fail("cpu sample: {} sampling params for {} logits rows", params.size(), logits.rows);
    }
    if (logits.rows > 1 && logits.stride < logits.cols) fail("cpu sample: logits stride {} < cols {}", logits.stride, logits.cols);
    // Rows are independent: each row's token depends only on its logits and its own params.
    parallel_for(logits.rows, [&](int64_t begin, int64_t end) {
      std::vector<float> row(static_cast<size_t>(logits.cols));
      for (int64_t r = begin; r < end; ++r) {
        const Act one = logits.slice_rows(r, 1);
        cpu::load_row(one.data, one.dtype, one.cols, row.data());
        const SamplingParams& p = params[static_cast<size_t>(r)];
        out_ids[r] = cpu::sample_row(row.data(), logits.cols, p.temperature, p.top_k, p.top_p, p.min_p,
                                     sampling_uniform(p.seed, p.step));
      }
    });
  }

 private:
  static void check_attention_shape(const char* op, const AttentionShape& shape, const KvCacheShape& cache_shape) {
    if (shape.num_kv_heads <= 0 || shape.num_heads <= 0 || shape.head_dim <= 0 ||
        shape.num_heads % shape.num_kv_heads != 0) {
      fail("cpu {}: attention shape heads {} / kv heads {} / head_dim {} is invalid", op, shape.num_heads,
           shape.num_kv_heads, shape.head_dim);
    }
    if (cache_shape.num_kv_heads != shape.num_kv_heads || cache_shape.head_dim != shape.head_dim) {
      fail("cpu {}: KV cache has {} kv heads of dim {}, the layer {} of dim {}", op, cache_shape.num_kv_heads,
           cache_shape.head_dim, shape.num_kv_heads, shape.head_dim);
    }
  }

  ForwardBatch batch_;  // backs the pointers of the last DeviceBatch
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace lathe::ops
