#include "ops/batch.h"

#include <algorithm>

namespace lathe::ops {

int32_t ForwardBatch::max_query_len() const {
  int32_t longest = 0;
  for (size_t s = 0; s + 1 < query_start.size(); ++s) longest = std::max(longest, query_start[s + 1] - query_start[s]);
  return longest;
}

int32_t ForwardBatch::max_context_len() const {
  int32_t longest = 0;
  for (int32_t len : context_lens) longest = std::max(longest, len);
  return longest;
}

DeviceBatch device_batch(const ForwardBatch& batch, const std::array<const int32_t*, 7>& arrays) {
  DeviceBatch d;
  d.phase = batch.phase;
  d.num_decode_rows = batch.num_decode_rows;
  d.num_tokens = batch.num_tokens();
  d.num_seqs = batch.num_seqs();
  d.max_blocks_per_seq = batch.max_blocks_per_seq;
  d.max_query_len = batch.max_query_len();
  d.max_context_len = batch.max_context_len();
  d.num_logits_rows = static_cast<int32_t>(batch.logits_rows.size());
  d.token_ids = arrays[0];
  d.positions = arrays[1];
  d.slot_mapping = arrays[2];
  d.query_start = arrays[3];
  d.context_lens = arrays[4];
  d.block_tables = arrays[5];
  d.logits_rows = arrays[6];
  return d;
}

}  // namespace lathe::ops
