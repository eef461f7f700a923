#include "attention_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "ops/cuda/attention_dispatch.h"

namespace lathe::attn_test {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0 && cudaMalloc(&ptr_, bytes) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) {
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  std::swap(ptr_, other.ptr_);
  std::swap(bytes_, other.bytes_);
  return *this;
}
void DeviceBuffer::upload(const void* host, size_t bytes) {
  if (bytes > bytes_ || cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    throw std::runtime_error("upload failed");
  }
}
void DeviceBuffer::download(void* host, size_t bytes) const {
  if (bytes > bytes_ || cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    throw std::runtime_error("download failed");
  }
}

namespace {

// splitmix64 -> uniform in [-sqrt(3), sqrt(3)) (unit variance): fast enough to fill hundreds of
// millions of cache elements on the host.
class FastRng {
 public:
  explicit FastRng(uint64_t seed) : state_(seed) {}
  float next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (static_cast<float>(z >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * 1.7320508f;
  }

 private:
  uint64_t state_;
};

}  // namespace

PagedCase::PagedCase(int32_t num_heads, int32_t num_kv_heads, int32_t head_dim, DType kv_dtype,
                     std::vector<SeqSpec> seqs, uint64_t seed, int32_t block_size)
    : seqs_(std::move(seqs)) {
  shape_ = {num_heads, num_kv_heads, head_dim, 1.0f / std::sqrt(static_cast<float>(head_dim))};
  std::mt19937_64 rng(seed);
  FastRng values(seed * 0x2545f4914f6cdd1dull + 1);
  int32_t total_blocks = 0;
  for (const SeqSpec& spec : seqs_) {
    const int32_t blocks = (spec.context_len + block_size - 1) / block_size;
    total_blocks += blocks;
    max_blocks_ = std::max(max_blocks_, blocks);
    num_rows_ += spec.query_len;
  }
  // A few spare blocks so that block ids are not simply 0..n-1, then a shuffled assignment.
  const int32_t num_blocks = total_blocks + 7;
  std::vector<int32_t> ids(num_blocks);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  int32_t next = 0;
  for (const SeqSpec& spec : seqs_) {
    const int32_t blocks = (spec.context_len + block_size - 1) / block_size;
    tables_.emplace_back(ids.begin() + next, ids.begin() + next + blocks);
    next += blocks;
  }
  cache_shape_ = {num_blocks, block_size, num_kv_heads, head_dim, kv_dtype};
  const size_t elems = static_cast<size_t>(cache_shape_.elements_per_layer());
  const size_t bytes = elems * dtype_size(kv_dtype);
  k_host_.resize(bytes);
  v_host_.resize(bytes);
  if (kv_dtype == DType::kF8E4M3) {
    k_scale_ = 0.037f;  // unit-variance values land on codes up to ~|47|, inside E4M3's 448
    v_scale_ = 0.029f;
  }
  auto fill = [&](std::vector<uint8_t>& cache, float scale) {
    for (size_t i = 0; i < elems; ++i) {
      const float x = values.next();
      if (kv_dtype == DType::kBF16) {
        const uint16_t b = to_bf16(x).bits;
        std::memcpy(cache.data() + 2 * i, &b, 2);
      } else {
        cache[i] = float_to_fp8_e4m3(x / scale);
      }
    }
  };
  fill(k_host_, k_scale_);
  fill(v_host_, v_scale_);
  for (const SeqSpec& spec : seqs_) {
    std::vector<uint16_t> q(static_cast<size_t>(spec.query_len) * row_elems());
    for (uint16_t& b : q) b = to_bf16(values.next()).bits;
    q_host_.push_back(std::move(q));
  }
  k_dev_ = DeviceBuffer(bytes);
  v_dev_ = DeviceBuffer(bytes);
  k_dev_.upload(k_host_.data(), bytes);
  v_dev_.upload(v_host_.data(), bytes);
}

std::vector<PagedCase::StepSeq> PagedCase::full_step() const {
  std::vector<StepSeq> step;
  for (int32_t s = 0; s < static_cast<int32_t>(seqs_.size()); ++s) step.push_back({s, seqs_[s].context_len, seqs_[s].query_len});
  return step;
}

ops::KvCacheLayer PagedCase::layer() const {
  ops::KvCacheLayer layer;
  layer.k = k_dev_.get();
  layer.v = v_dev_.get();
  layer.k_scale = k_scale_;
  layer.v_scale = v_scale_;
  return layer;
}

ops::DeviceBatch PagedCase::upload_step(ops::Phase phase, const std::vector<StepSeq>& step) {
  const int32_t num_seqs = static_cast<int32_t>(step.size());
  std::vector<int32_t> query_start{0}, context_lens, tables(static_cast<size_t>(num_seqs) * max_blocks_, 0);
  std::vector<uint16_t> q;
  int32_t max_q = 0, max_ctx = 0;
  for (int32_t i = 0; i < num_seqs; ++i) {
    const StepSeq& st = step[i];
    query_start.push_back(query_start.back() + st.query_len);
    context_lens.push_back(st.context_len);
    max_q = std::max(max_q, st.query_len);
    max_ctx = std::max(max_ctx, st.context_len);
    std::copy(tables_[st.seq].begin(), tables_[st.seq].end(), tables.begin() + static_cast<size_t>(i) * max_blocks_);
    const auto& rows = q_host_[st.seq];
    const SeqSpec& own = seqs_[st.seq];
    if (st.context_len > own.context_len || st.context_len - st.query_len < own.context_len - own.query_len) {
      throw std::runtime_error("step rows outside the case's query rows");
    }
    const int64_t first = static_cast<int64_t>(st.context_len - st.query_len - (own.context_len - own.query_len)) * row_elems();
    q.insert(q.end(), rows.begin() + first, rows.begin() + first + static_cast<int64_t>(st.query_len) * row_elems());
  }
  const int32_t num_tokens = query_start.back();
  std::vector<int32_t> meta;
  meta.insert(meta.end(), query_start.begin(), query_start.end());
  meta.insert(meta.end(), context_lens.begin(), context_lens.end());
  meta.insert(meta.end(), tables.begin(), tables.end());
  if (meta_dev_.size() < meta.size() * 4) meta_dev_ = DeviceBuffer(meta.size() * 4 + 4096);
  meta_dev_.upload(meta.data(), meta.size() * 4);
  const size_t q_bytes = q.size() * 2;
  if (q_dev_.size() < q_bytes) q_dev_ = DeviceBuffer(q_bytes);
  if (out_dev_.size() < q_bytes) out_dev_ = DeviceBuffer(q_bytes);
  q_dev_.upload(q.data(), q_bytes);

  ops::DeviceBatch batch;
  batch.phase = phase;
  batch.num_tokens = num_tokens;
  batch.num_seqs = num_seqs;
  batch.max_blocks_per_seq = max_blocks_;
  batch.max_query_len = max_q;
  batch.max_context_len = max_ctx;
  const int32_t* base = static_cast<const int32_t*>(meta_dev_.get());
  batch.query_start = base;
  batch.context_lens = base + num_seqs + 1;
  batch.block_tables = base + 2 * num_seqs + 1;
  return batch;
}

void PagedCase::poison_output() {
  // 0xffff is a BF16 NaN: any element the kernel does not write stays NaN. cudaMemset runs on the
  // legacy default stream, which a non-blocking stream does not wait for: finish it here, or a
  // launch on such a stream (the graph test's) may race it and find its outputs poisoned after.
  if (out_dev_.size() > 0) {
    cudaMemset(out_dev_.get(), 0xff, out_dev_.size());
    cudaDeviceSynchronize();
  }
}

std::vector<uint16_t> PagedCase::download_output(int32_t rows) const {
  std::vector<uint16_t> out(static_cast<size_t>(rows) * row_elems());
  out_dev_.download(out.data(), out.size() * 2);
  return out;
}

namespace {

template <typename Batch>
bool set_decode_rows(Batch& batch, int32_t rows) {
  if constexpr (requires { batch.num_decode_rows; }) {
    batch.num_decode_rows = rows;
    return true;
  } else {
    return rows == 0;
  }
}

}  // namespace

bool batch_has_decode_rows() {
  ops::DeviceBatch probe;
  return set_decode_rows(probe, 1);
}

std::vector<uint16_t> PagedCase::run(ops::Phase phase, const std::vector<StepSeq>& step,
                                     const ops::AttentionConfig& config, cudaStream_t stream, int32_t decode_rows) {
  ops::DeviceBatch batch = upload_step(phase, step);
  if (!set_decode_rows(batch, decode_rows)) throw std::runtime_error("this build's DeviceBatch has no num_decode_rows");
  poison_output();
  const size_t ws_bytes = ops::attention_workspace_bytes(shape_, config);
  DeviceBuffer workspace(ws_bytes);
  if (ws_bytes > 0) {
    cudaMemset(workspace.get(), 0xff, ws_bytes);  // NaN: an unwritten record poisons the reduce
    cudaDeviceSynchronize();                      // before a launch on a non-blocking stream (poison_output)
  }
  const int64_t cols = row_elems();
  const ops::Act q{q_dev_.get(), DType::kBF16, batch.num_tokens, cols, cols};
  const ops::Act out{out_dev_.get(), DType::kBF16, batch.num_tokens, cols, cols};
  ops::cuda::attention_forward(batch, q, shape_, cache_shape_, layer(), out, workspace.get(), ws_bytes, config, stream);
  if (cudaStreamSynchronize(stream) != cudaSuccess) throw std::runtime_error(cudaGetErrorString(cudaGetLastError()));
  return download_output(batch.num_tokens);
}

double PagedCase::kv_value(const std::vector<uint8_t>& cache, float scale, int32_t s, int32_t pos, int32_t kv_head,
                           int32_t d) const {
  const int32_t bs = cache_shape_.block_size;
  const int64_t idx = cache_shape_.offset(tables_[s][pos / bs], kv_head, pos % bs) + d;
  if (cache_shape_.dtype == DType::kBF16) {
    uint16_t b;
    std::memcpy(&b, cache.data() + 2 * idx, 2);
    return to_float(bf16{b});
  }
  return static_cast<double>(fp8_e4m3_to_float(cache[idx])) * scale;
}

std::vector<double> PagedCase::reference(int32_t s, int32_t pos) const {
  const int32_t hd = shape_.head_dim, group = shape_.num_heads / shape_.num_kv_heads;
  std::vector<double> out(static_cast<size_t>(row_elems()), 0.0);
  std::vector<double> scores(static_cast<size_t>(pos) + 1);
  for (int32_t h = 0; h < shape_.num_heads; ++h) {
    const int32_t kvh = h / group;
    const int64_t q_row = pos - (seqs_[s].context_len - seqs_[s].query_len);
    const uint16_t* q = q_host_[s].data() + q_row * row_elems() + static_cast<int64_t>(h) * hd;
    double max_score = -INFINITY;
    for (int32_t j = 0; j <= pos; ++j) {
      double dot = 0;
      for (int32_t d = 0; d < hd; ++d) dot += static_cast<double>(to_float(bf16{q[d]})) * kv_value(k_host_, k_scale_, s, j, kvh, d);
      scores[j] = dot * shape_.scale;
      max_score = std::max(max_score, scores[j]);
    }
    double sum = 0;
    for (int32_t j = 0; j <= pos; ++j) sum += (scores[j] = std::exp(scores[j] - max_score));
    for (int32_t j = 0; j <= pos; ++j) {
      const double w = scores[j] / sum;
      for (int32_t d = 0; d < hd; ++d) out[static_cast<size_t>(h) * hd + d] += w * kv_value(v_host_, v_scale_, s, j, kvh, d);
    }
  }
  return out;
}

std::vector<double> PagedCase::reference(const std::vector<StepSeq>& step) const {
  std::vector<double> out;
  for (const StepSeq& st : step) {
    for (int32_t pos = st.context_len - st.query_len; pos < st.context_len; ++pos) {
      std::vector<double> row = reference(st.seq, pos);
      out.insert(out.end(), row.begin(), row.end());
    }
  }
  return out;
}

double rel_rms(const std::vector<uint16_t>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double err = 0, norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double x = to_float(bf16{out[i]});
    if (std::isnan(x)) return INFINITY;
    err += (x - ref[i]) * (x - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(err / norm);
}

double rel_rms_bf16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  std::vector<double> ref(b.size());
  for (size_t i = 0; i < b.size(); ++i) ref[i] = to_float(bf16{b[i]});
  return rel_rms(a, ref);
}

void PagedCase::poison_slots_past_the_end() {
  const int32_t bs = cache_shape_.block_size, hd = cache_shape_.head_dim;
  const size_t elem = dtype_size(cache_shape_.dtype);
  const uint16_t bf16_nan = 0x7fc0;
  const uint8_t fp8_nan = 0x7f;  // E4M3 has no infinities; S.1111.111 is NaN
  for (size_t s = 0; s < seqs_.size(); ++s) {
    const int32_t len = seqs_[s].context_len;
    if (len % bs == 0) continue;  // the last block is full
    const int32_t block = tables_[s].back();
    for (int32_t h = 0; h < cache_shape_.num_kv_heads; ++h) {
      for (int32_t slot = len % bs; slot < bs; ++slot) {
        for (int32_t d = 0; d < hd; ++d) {
          const size_t at = static_cast<size_t>(cache_shape_.offset(block, h, slot) + d) * elem;
          for (std::vector<uint8_t>* cache : {&k_host_, &v_host_}) {
            if (elem == 2) {
              std::memcpy(cache->data() + at, &bf16_nan, 2);
            } else {
              (*cache)[at] = fp8_nan;
            }
          }
        }
      }
    }
  }
  k_dev_.upload(k_host_.data(), k_host_.size());
  v_dev_.upload(v_host_.data(), v_host_.size());
}

void PagedCase::set_query_element(int32_t s, int32_t h, int32_t d, uint16_t bits) {
  q_host_.at(s).at(static_cast<int64_t>(h) * shape_.head_dim + d) = bits;
}

bool any_nan(const std::vector<uint16_t>& out) {
  return std::any_of(out.begin(), out.end(), [](uint16_t b) { return std::isnan(to_float(bf16{b})); });
}

ops::AttentionConfig make_config(target::SplitkPolicy policy, bool pack, int32_t sm_count, int32_t max_decode_seqs,
                                 int32_t slices) {
  ops::AttentionConfig config;
  config.levers.attn_decode_splitk = {policy, false};
  config.levers.attn_decode_gqa_pack = {pack, false};
  config.levers.attn_decode_split_slices = {slices, false};
  config.sm_count = sm_count;
  config.max_decode_seqs = max_decode_seqs;
  return config;
}

}  // namespace lathe::attn_test
