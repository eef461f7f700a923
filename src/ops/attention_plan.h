#pragma once
// The attention plan: a pure function from (phase, batch width, shapes, configuration) to the
// kernel arm a step's attention takes, its split count and the workspace it needs. The CUDA
// dispatch (ops/cuda/attention_dispatch.h) runs exactly what this returns; the unit tests check
// every rung here without a GPU (ARCHITECTURE rule 7).
#include <cstddef>
#include <cstdint>

#include "ops/backend.h"
#include "ops/kv_cache.h"
#include "ops/tensor.h"
#include "target/levers.h"

namespace lathe::ops {

// What the attention op needs beyond the step's inputs, fixed for the life of a serve.
struct AttentionConfig {
  target::Levers levers;        // resolved once at boot (target/target.h)
  int32_t sm_count = 132;       // the TARGET's declared SM count: the split policy reads
                                // configuration, never the live device or batch
  int32_t max_decode_seqs = 1;  // the widest decode batch the serve schedules (--max-num-seqs);
                                // also the row count the split-K workspace is sized for
};

enum class AttentionArm {
  kPrefill,          // flash-style paged prefill over every row of the step
  kDecode,           // one CTA per (q head, sequence), whole context, no workspace
  kDecodeGqaPacked,  // one CTA per (kv head, sequence) carrying the query group; bit-identical
                     // to kDecode
  kDecodeSplitK,     // tensor cores, grid (kv heads x parts, splits, sequences) into the
                     // workspace, then the reduce
};

const char* attention_arm_name(AttentionArm arm);

struct AttentionPlan {
  AttentionArm arm = AttentionArm::kPrefill;
  int32_t num_splits = 1;     // > 1 only for kDecodeSplitK
  int32_t split_slices = 1;   // kDecodeSplitK: records per split (decode_split_slices)
  int32_t gqa_group = 1;      // query heads per CTA: the group for kDecodeGqaPacked; for
                              // kDecodeSplitK splitk_rows_per_cta when packing is armed, else 1
  size_t workspace_bytes = 0; // what this launch addresses in the split-K workspace
};

// The arm for one attention call. A decode step (every sequence one row) takes a decode arm; a
// step with a prefill chunk takes kPrefill. (The CUDA dispatch plans a mixed step in two parts:
// its leading DeviceBatch::num_decode_rows sequences as a decode step, the rest as prefill, so a
// decode row's bytes do not depend on prefill chunks sharing its step.) Throws lathe::Error when the
// shapes are not ones the CUDA kernels serve (head_dim, KV dtype, GQA ratio), naming them.
AttentionPlan plan_attention(Phase phase, int32_t num_seqs, const AttentionShape& shape,
                             const KvCacheShape& cache_shape, const AttentionConfig& config);

// Bytes of split-K workspace the serve must allocate once so that every decode launch the plan
// can produce for up to config.max_decode_seqs sequences fits (0 when no split arm can be taken).
// Uses the same split resolution as plan_attention (ops/splitk_policy.h: decode_num_splits).
size_t attention_workspace_bytes(const AttentionShape& shape, const AttentionConfig& config);

// Whether the CUDA attention kernels serve this geometry at all (head_dim 64/128/256, KV dtype
// BF16 or F8_E4M3, num_heads a positive multiple of num_kv_heads). Empty string when they do,
// else the reason.
const char* attention_shape_unsupported(const AttentionShape& shape, const KvCacheShape& cache_shape);

}  // namespace lathe::ops
