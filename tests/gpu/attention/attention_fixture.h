#pragma once
// A paged-attention case on the device: a KV cache with shuffled block tables, query rows, the
// step's metadata, a double-precision reference, and runners for the dispatch and the raw
// launchers. Values are random (uniform, unit variance; never zeros) and outputs are poisoned before every run so an
// unwritten element shows up as NaN.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/numeric.h"
#include "ops/attention_plan.h"
#include "ops/batch.h"
#include "ops/kv_cache.h"
#include "ops/tensor.h"

namespace lathe::attn_test {

#define ATTN_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr << ": " << cudaGetErrorString(cudaGetLastError())

// Owns one device allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t size() const { return bytes_; }
  void upload(const void* host, size_t bytes);
  void download(void* host, size_t bytes) const;

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

struct SeqSpec {
  int32_t context_len = 0;  // after this step
  int32_t query_len = 1;    // rows this step (1 for decode)
};

// The whole KV cache of a case (K and V codes for every position of every sequence) and the
// queries. Sequence s's positions occupy its own shuffled blocks.
class PagedCase {
 public:
  PagedCase(int32_t num_heads, int32_t num_kv_heads, int32_t head_dim, DType kv_dtype, std::vector<SeqSpec> seqs,
            uint64_t seed, int32_t block_size = 16);

  const ops::AttentionShape& shape() const { return shape_; }
  const ops::KvCacheShape& cache_shape() const { return cache_shape_; }
  const std::vector<SeqSpec>& seqs() const { return seqs_; }
  int32_t num_rows() const { return num_rows_; }
  int64_t row_elems() const { return static_cast<int64_t>(shape_.num_heads) * shape_.head_dim; }

  // One sequence of a step: which of this case's sequences, and its (context_len, query_len)
  // for this step (a chunk of its prompt, or its own spec).
  struct StepSeq {
    int32_t seq = 0;
    int32_t context_len = 0;
    int32_t query_len = 1;
  };
  // Every sequence with its own spec, in order.
  std::vector<StepSeq> full_step() const;

  // Uploads the step (metadata and q rows in step order), poisons the output, runs the dispatch
  // with a workspace of attention_workspace_bytes(shape, config) and returns the BF16 output
  // bits [rows, heads * head_dim] in step order.
  // decode_rows > 0 marks the step's leading sequences as decode rows of a mixed step
  // (DeviceBatch::num_decode_rows, where the op API has it).
  std::vector<uint16_t> run(ops::Phase phase, const std::vector<StepSeq>& step, const ops::AttentionConfig& config,
                            cudaStream_t stream = nullptr, int32_t decode_rows = 0);

  // Reference output (double) of sequence s's query at position `pos` (it sees 0..pos).
  std::vector<double> reference(int32_t s, int32_t pos) const;
  // Reference rows of a whole step, concatenated in step order.
  std::vector<double> reference(const std::vector<StepSeq>& step) const;

  // Uploads the step's metadata and q rows; returns the device batch (valid until the next call).
  ops::DeviceBatch upload_step(ops::Phase phase, const std::vector<StepSeq>& step);
  ops::KvCacheLayer layer() const;
  // Replaces element d of head h in the first query row of sequence s (BF16 bits), e.g. with a
  // NaN, before the next run or upload_step.
  void set_query_element(int32_t s, int32_t h, int32_t d, uint16_t bits);
  // Writes NaN codes into every slot of every sequence's last block past its context length (K
  // and V, every head), on the device and the host copy: slots no step has written, which a
  // serve's blocks may hold from an earlier sequence. The reference never reads them.
  void poison_slots_past_the_end();
  void* q_device() const { return q_dev_.get(); }
  void* out_device() const { return out_dev_.get(); }
  void poison_output();
  std::vector<uint16_t> download_output(int32_t rows) const;

 private:
  ops::AttentionShape shape_;
  ops::KvCacheShape cache_shape_;
  std::vector<SeqSpec> seqs_;
  int32_t num_rows_ = 0;
  int32_t max_blocks_ = 0;
  float k_scale_ = 1.0f, v_scale_ = 1.0f;
  std::vector<uint8_t> k_host_, v_host_;                   // raw cache bytes
  std::vector<std::vector<int32_t>> tables_;               // per sequence block ids
  std::vector<std::vector<uint16_t>> q_host_;              // per sequence [query_len, heads * hd] bf16:
                                                           // positions context_len - query_len ..
  DeviceBuffer k_dev_, v_dev_, q_dev_, out_dev_, meta_dev_;

  double kv_value(const std::vector<uint8_t>& cache, float scale, int32_t s, int32_t pos, int32_t kv_head,
                  int32_t d) const;
};

// Whether ops::DeviceBatch carries num_decode_rows in this build.
bool batch_has_decode_rows();

// ||a - ref|| / ||ref|| over BF16 output bits against a double reference.
double rel_rms(const std::vector<uint16_t>& out, const std::vector<double>& ref);
// Same for two BF16 outputs (b is the reference).
double rel_rms_bf16(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b);
// True when any element is NaN.
bool any_nan(const std::vector<uint16_t>& out);

// `slices`: the attn_decode_split_slices lever (0 = auto, 1 = off). The default, a pinned 4, slices
// the splits of long sequences at every batch width, so every split-K test covers the sliced path
// (auto slices only serves whose widest batch is narrow: ops/splitk_policy.h).
ops::AttentionConfig make_config(target::SplitkPolicy policy, bool pack, int32_t sm_count = 132,
                                 int32_t max_decode_seqs = 64, int32_t slices = 4);

}  // namespace lathe::attn_test
