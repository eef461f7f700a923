#include "ops/attention_plan.h"

#include <algorithm>

#include "core/error.h"
#include "ops/splitk_policy.h"

namespace lathe::ops {
namespace {

// THE slice count of a split launch over a KV cache of FP8 codes (fp8_kv) or not: plan_attention
// and attention_workspace_bytes both use it.
uint32_t split_slices_of(const AttentionConfig& config, const AttentionShape& shape, uint32_t splits,
                         bool fp8_kv) {
  return decode_split_slices(config.levers.attn_decode_split_slices.value.for_kv(fp8_kv),
                             config.levers.attn_decode_splitk.value,
                             static_cast<uint32_t>(std::max(config.sm_count, 0)),
                             static_cast<uint32_t>(std::max(shape.num_kv_heads, 0)), splits,
                             static_cast<uint32_t>(std::max(config.max_decode_seqs, 1)));
}

}  // namespace

const char* attention_arm_name(AttentionArm arm) {
  switch (arm) {
    case AttentionArm::kPrefill:
      return "prefill";
    case AttentionArm::kDecode:
      return "decode";
    case AttentionArm::kDecodeGqaPacked:
      return "decode_gqa_packed";
    case AttentionArm::kDecodeSplitK:
      return "decode_splitk";
  }
  return "?";
}

const char* attention_shape_unsupported(const AttentionShape& shape, const KvCacheShape& cache_shape) {
  if (shape.head_dim != 64 && shape.head_dim != 128 && shape.head_dim != 256) return "head_dim is not 64, 128 or 256";
  if (cache_shape.head_dim != shape.head_dim) return "the KV cache head_dim differs from the attention head_dim";
  if (shape.num_kv_heads <= 0 || shape.num_heads <= 0) return "head counts must be positive";
  if (shape.num_heads % shape.num_kv_heads != 0) return "num_heads is not a multiple of num_kv_heads";
  if (cache_shape.num_kv_heads != shape.num_kv_heads) return "the KV cache num_kv_heads differs from the attention's";
  if (cache_shape.dtype != DType::kBF16 && cache_shape.dtype != DType::kF8E4M3) return "KV dtype is not BF16 or F8_E4M3";
  if (cache_shape.block_size <= 0) return "block_size must be positive";
  return "";
}

AttentionPlan plan_attention(Phase phase, int32_t num_seqs, const AttentionShape& shape,
                             const KvCacheShape& cache_shape, const AttentionConfig& config) {
  if (const char* why = attention_shape_unsupported(shape, cache_shape); *why != '\0') {
    fail("attention: unsupported shape (num_heads={}, num_kv_heads={}, head_dim={}, kv dtype {}, block_size {}): {}",
         shape.num_heads, shape.num_kv_heads, shape.head_dim, dtype_name(cache_shape.dtype), cache_shape.block_size,
         why);
  }
  AttentionPlan plan;
  if (phase == Phase::kPrefill) return plan;
  const uint32_t ref = legacy_reference_seqs(static_cast<uint32_t>(std::max(num_seqs, 0)),
                                             static_cast<uint32_t>(std::max(config.max_decode_seqs, 0)));
  const uint32_t splits = decode_num_splits(config.levers.attn_decode_splitk.value,
                                            static_cast<uint32_t>(std::max(config.sm_count, 0)),
                                            static_cast<uint32_t>(shape.num_heads), ref);
  if (splits > 1) {
    plan.arm = AttentionArm::kDecodeSplitK;
    plan.num_splits = static_cast<int32_t>(splits);
    plan.split_slices =
        static_cast<int32_t>(split_slices_of(config, shape, splits, cache_shape.dtype == DType::kF8E4M3));
    plan.workspace_bytes = static_cast<size_t>(std::max(num_seqs, 0)) * static_cast<size_t>(shape.num_heads) * splits *
                           static_cast<size_t>(plan.split_slices) * workspace_record_bytes(shape.head_dim);
    if (config.levers.attn_decode_gqa_pack.value) {
      plan.gqa_group = splitk_rows_per_cta(shape.num_heads / shape.num_kv_heads);
    }
    return plan;
  }
  if (config.levers.attn_decode_gqa_pack.value &&
      gqa_pack_shape_ok(shape.num_heads, shape.num_kv_heads, shape.head_dim)) {
    plan.arm = AttentionArm::kDecodeGqaPacked;
    plan.gqa_group = shape.num_heads / shape.num_kv_heads;
    return plan;
  }
  plan.arm = AttentionArm::kDecode;
  return plan;
}

size_t attention_workspace_bytes(const AttentionShape& shape, const AttentionConfig& config) {
  const SplitkPolicy& policy = config.levers.attn_decode_splitk.value;
  const uint32_t sm = static_cast<uint32_t>(std::max(config.sm_count, 0));
  const uint32_t heads = static_cast<uint32_t>(std::max(shape.num_heads, 0));
  const uint32_t rows = static_cast<uint32_t>(std::max(config.max_decode_seqs, 1));
  // The largest split count any launch with <= rows sequences can take: auto/pinned do not move;
  // legacy is largest at the smallest reference batch, which is `rows` (ref >= max_decode_seqs).
  const uint32_t widest = decode_num_splits(policy, sm, heads, legacy_reference_seqs(1, rows));
  if (widest <= 1) return 0;
  // The shape carries no KV dtype: room for the larger of the two dtypes' slice counts.
  const uint32_t slices =
      std::max(split_slices_of(config, shape, widest, false), split_slices_of(config, shape, widest, true));
  return workspace_slots(policy, sm, heads, rows, legacy_reference_seqs(1, rows)) * slices *
         workspace_record_bytes(shape.head_dim);
}

}  // namespace lathe::ops
