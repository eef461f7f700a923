#include "engine/forward_batch.h"

#include <algorithm>

#include "core/error.h"

namespace lathe::engine {

ops::ForwardBatch build_forward_batch(const ScheduledStep& step, const BlockManager& blocks,
                                      int32_t pad_blocks_per_seq) {
  ops::ForwardBatch batch;
  const size_t num_seqs = step.seqs.size();
  int32_t width = std::max(pad_blocks_per_seq, 0);
  bool all_decode = !step.seqs.empty();
  for (const ScheduledSeq& rows : step.seqs) {
    width = std::max(width, blocks.blocks_for_tokens(rows.context_len()));
    all_decode = all_decode && rows.decode;
  }
  batch.phase = all_decode ? ops::Phase::kDecode : ops::Phase::kPrefill;
  // Decode rows come first in a step (scheduler.h); count the leading run of them.
  for (const ScheduledSeq& rows : step.seqs) {
    if (!rows.decode || rows.num_tokens() != 1) break;
    ++batch.num_decode_rows;
  }
  batch.max_blocks_per_seq = width;
  batch.token_ids.reserve(static_cast<size_t>(step.num_tokens));
  batch.positions.reserve(static_cast<size_t>(step.num_tokens));
  batch.slot_mapping.reserve(static_cast<size_t>(step.num_tokens));
  batch.query_start.reserve(num_seqs + 1);
  batch.context_lens.reserve(num_seqs);
  batch.block_tables.assign(num_seqs * static_cast<size_t>(width), BlockManager::kScratchBlock);

  batch.query_start.push_back(0);
  for (size_t s = 0; s < num_seqs; ++s) {
    const ScheduledSeq& rows = step.seqs[s];
    for (int32_t r = 0; r < rows.num_tokens(); ++r) {
      const int32_t position = rows.start + r;
      batch.token_ids.push_back(rows.token_ids[static_cast<size_t>(r)]);
      batch.positions.push_back(position);
      batch.slot_mapping.push_back(blocks.slot(rows.id, position));
    }
    batch.query_start.push_back(batch.num_tokens());
    batch.context_lens.push_back(rows.context_len());
    if (rows.samples) batch.logits_rows.push_back(batch.num_tokens() - 1);

    const std::vector<int32_t>& table = blocks.block_table(rows.id);
    const size_t used = static_cast<size_t>(blocks.blocks_for_tokens(rows.context_len()));
    if (table.size() < used) {
      fail("internal: sequence {} has {} KV blocks but needs {} for {} tokens", rows.id, table.size(), used,
           rows.context_len());
    }
    std::copy_n(table.begin(), used,
                batch.block_tables.begin() + static_cast<ptrdiff_t>(s * static_cast<size_t>(width)));
  }
  return batch;
}

}  // namespace lathe::engine
