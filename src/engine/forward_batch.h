#pragma once
// ScheduledStep -> ops::ForwardBatch (pure function, no device).
//
// Rows follow the step's sequence order. For sequence s with rows [start, start + n):
//   positions    = start, start + 1, ..., start + n - 1        (contiguous, its own)
//   slot_mapping = blocks.slot(s, position)                    (inside its own blocks)
//   context_lens = start + n
//   block_tables = its first ceil(context_len / block_size) blocks, padded with the scratch
//                  block (0) to max_blocks_per_seq = max(pad_blocks_per_seq, widest need)
//   logits_rows  = its last row, only if it samples this step (a prefill chunk that does not
//                  finish the prompt produces no token)
// phase = kDecode iff the step is non-empty and every sequence is decoding.
#include <cstdint>

#include "engine/block_manager.h"
#include "engine/scheduler.h"
#include "ops/batch.h"

namespace lathe::engine {

// `pad_blocks_per_seq` lets a caller keep block_tables at a fixed width (e.g. for CUDA graphs:
// blocks_for_tokens(max_model_len)). Throws lathe::Error (internal) if a row's block is missing.
ops::ForwardBatch build_forward_batch(const ScheduledStep& step, const BlockManager& blocks,
                                      int32_t pad_blocks_per_seq = 0);

}  // namespace lathe::engine
