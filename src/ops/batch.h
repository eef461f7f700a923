#pragma once
// One forward step's inputs, planned on the host (plain data, ARCHITECTURE rule 4), and the
// device-resident copy a backend reads while running the step.
//
// A step holds S sequences. Sequence s contributes query_len[s] consecutive token rows starting
// at row query_start[s] (prefill chunks and decode rows mixed; T rows in all). Its KV lives in
// paged blocks listed in its block table; after this step the cache holds context_len[s] of its
// tokens (the cached prefix plus this step's rows), and row r is written to slot_mapping[r] =
// block_id * block_size + offset.
#include <array>
#include <cstdint>
#include <vector>

#include "ops/tensor.h"

namespace lathe::ops {

struct ForwardBatch {
  // kDecode only when every sequence is decoding one token; any prefill chunk makes it kPrefill.
  Phase phase = Phase::kPrefill;
  // Rows [0, num_decode_rows) are decode rows (one per decoding sequence, placed first). In a
  // mixed step the model runs their linears as decode and the rest as prefill, so a decode row
  // takes the same arm (and produces the same bits) whether or not prefill chunks share its step.
  int32_t num_decode_rows = 0;
  std::vector<int32_t> token_ids;     // [T]
  std::vector<int32_t> positions;     // [T] absolute position of each row in its sequence
  std::vector<int32_t> slot_mapping;  // [T]
  std::vector<int32_t> query_start;   // [S + 1] prefix sums of query lengths (query_start[S] = T)
  std::vector<int32_t> context_lens;  // [S]
  std::vector<int32_t> block_tables;  // [S, max_blocks_per_seq], unused entries 0
  int32_t max_blocks_per_seq = 0;
  std::vector<int32_t> logits_rows;   // rows whose logits the step returns (e.g. each last row)

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  int32_t num_seqs() const { return static_cast<int32_t>(context_lens.size()); }
  int32_t max_query_len() const;
  int32_t max_context_len() const;
};

// The same arrays in the backend's memory. Sizes are host-known; contents may be device-only
// (kernels must not need the host to read them: CUDA graphs replay with new contents).
struct DeviceBatch {
  Phase phase = Phase::kPrefill;
  int32_t num_decode_rows = 0;  // ForwardBatch::num_decode_rows: the first sequences, one row each
  int32_t num_tokens = 0;
  int32_t num_seqs = 0;
  int32_t max_blocks_per_seq = 0;
  int32_t max_query_len = 0;
  int32_t max_context_len = 0;
  int32_t num_logits_rows = 0;
  const int32_t* token_ids = nullptr;
  const int32_t* positions = nullptr;
  const int32_t* slot_mapping = nullptr;
  const int32_t* query_start = nullptr;
  const int32_t* context_lens = nullptr;
  const int32_t* block_tables = nullptr;
  const int32_t* logits_rows = nullptr;
};

// The DeviceBatch of `batch` whose arrays sit at `arrays` in the backend's memory, in the order
// token_ids, positions, slot_mapping, query_start, context_lens, block_tables, logits_rows; the
// sizes come from `batch`.
DeviceBatch device_batch(const ForwardBatch& batch, const std::array<const int32_t*, 7>& arrays);

}  // namespace lathe::ops
