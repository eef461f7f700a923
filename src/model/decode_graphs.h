#pragma once
// Decode steps replayed from recorded graphs (CUDA graphs on the CUDA backend).
//
// At start-up, after the levers are resolved, one graph per batch bucket B is recorded: the
// whole Qwen3 forward of a pure-decode step of B rows, reading its arrays from one device buffer
// owned here and writing B logits rows. A decode step of b <= B_max sequences takes the smallest
// bucket B >= b: its arrays are packed into that buffer, padded to B rows (padding rows decode
// token 0 at position 0 into slot 0 of the scratch block 0, with context 1, and their logits are
// ignored), uploaded in one copy, and the graph replays. Prefill or mixed steps, and decode steps
// wider than the largest bucket, stay eager.
//
// Bits: a real row's result does not depend on padding. The decode GEMV tiers give every row the
// bits of the one-row kernel, the GEMM pins one algorithm per shape, attention reads only the
// row's own sequence, and buckets never straddle a backend's decode arm boundary
// (Backend::decode_arm_boundaries), so a padded row takes the arm its unpadded step would take.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/device_buffer.h"
#include "model/qwen3.h"
#include "ops/backend.h"
#include "ops/batch.h"

namespace lathe::model {

// Bucket sizes for decode steps of 1..max_seqs rows, ascending: 1, 2, 4, 8, then every 8 up to
// 64, every 16 up to 128, every 32 beyond; max_seqs itself, and every boundary <= max_seqs, are
// always buckets. Empty when max_seqs < 1.
std::vector<int32_t> decode_graph_buckets(int32_t max_seqs, std::span<const int32_t> boundaries);

// Where each array of a padded decode step lives in the shared input buffer (in int32 elements).
// The small arrays come first, each sized for the widest bucket, then the block tables of
// `table_width` entries per row, so a step of B rows uploads one prefix of
// prefix_elements(B) elements.
struct DecodeInputLayout {
  int32_t max_rows = 0;
  int32_t table_width = 0;
  int64_t token_ids = 0, positions = 0, slot_mapping = 0, query_start = 0, context_lens = 0, logits_rows = 0,
          block_tables = 0;

  DecodeInputLayout(int32_t max_rows, int32_t table_width);
  int64_t prefix_elements(int32_t rows) const { return block_tables + int64_t{rows} * table_width; }
  int64_t total_elements() const { return prefix_elements(max_rows); }
};

// True when `batch` is a pure decode step a bucket of the layout can hold: every sequence one
// row, its logits row its own, and block tables no wider than table_width.
bool fits_decode_graph(const ops::ForwardBatch& batch, const DecodeInputLayout& layout);

// Writes the arrays of `batch` (which fits_decode_graph accepted) padded to `bucket` rows into
// host[0, layout.prefix_elements(bucket)). Pure (unit-tested).
void pack_padded_decode(const ops::ForwardBatch& batch, int32_t bucket, const DecodeInputLayout& layout,
                        std::vector<int32_t>& host);

class DecodeGraphs {
 public:
  // Records one graph per bucket of decode_graph_buckets(max_seqs, backend boundaries) into
  // `logits` (F32, at least [max_seqs, vocab], in backend memory), each after one eager warm-up
  // run. Throws lathe::Error when the backend cannot record graphs or a recording fails.
  DecodeGraphs(Qwen3Model& model, int32_t max_seqs, int32_t table_width, void* logits);

  // Runs `batch` from a graph when it fits one: packs, uploads, replays, and returns the logits
  // of its rows (F32 [num_seqs, vocab] view of the logits buffer; asynchronous like the ops).
  // Returns an empty Act (rows 0) when the step must run eagerly. `clock` (optional) gets one
  // mark between the inputs' copy and the replay, only when a graph runs.
  ops::Act run(const ops::ForwardBatch& batch, ops::OpClock* clock = nullptr);

  const std::vector<int32_t>& buckets() const { return buckets_; }
  double capture_seconds() const { return capture_seconds_; }

 private:
  // The DeviceBatch a graph of `rows` rows reads (pointers into inputs_).
  ops::DeviceBatch device_batch(int32_t rows) const;
  ops::Act logits_view(int64_t rows) const;

  Qwen3Model& model_;
  DecodeInputLayout layout_;
  void* logits_;
  DeviceBuffer inputs_;          // int32 [layout_.total_elements()]
  std::vector<int32_t> host_;    // staging of one step's packed prefix
  std::vector<int32_t> buckets_;
  std::vector<std::unique_ptr<ops::OpGraph>> graphs_;  // one per bucket
  double capture_seconds_ = 0.0;
};

}  // namespace lathe::model
