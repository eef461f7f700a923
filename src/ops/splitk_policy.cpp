#include "ops/splitk_policy.h"

#include <algorithm>

namespace lathe::ops {

uint32_t auto_splits(uint32_t sm_count, uint32_t num_q_heads) {
  const uint64_t heads = std::max<uint32_t>(num_q_heads, 1);
  const uint64_t ctas = static_cast<uint64_t>(kSplitkTargetWaves) * std::max<uint32_t>(sm_count, 1);
  const uint64_t splits = (ctas + heads - 1) / heads;
  return static_cast<uint32_t>(std::clamp<uint64_t>(splits, 1, kMaxDecodeSplits));
}

uint32_t legacy_splits(uint32_t sm_count, uint32_t num_q_heads, uint32_t ref_seqs) {
  const uint64_t ctas = static_cast<uint64_t>(std::max<uint32_t>(num_q_heads, 1)) * std::max<uint32_t>(ref_seqs, 1);
  if (ctas >= sm_count) return 1;
  return static_cast<uint32_t>(sm_count / ctas);
}

uint32_t legacy_reference_seqs(uint32_t num_seqs, uint32_t max_decode_seqs) {
  return std::max({num_seqs, max_decode_seqs, 1u});
}

uint32_t decode_num_splits(const SplitkPolicy& policy, uint32_t sm_count, uint32_t num_q_heads,
                           uint32_t legacy_ref_seqs) {
  switch (policy.kind) {
    case SplitkPolicy::Kind::kLegacy:
      return legacy_splits(sm_count, num_q_heads, legacy_ref_seqs);
    case SplitkPolicy::Kind::kAuto:
      return auto_splits(sm_count, num_q_heads);
    case SplitkPolicy::Kind::kPinned:
      break;
  }
  return std::clamp<uint32_t>(policy.pinned, 1, kMaxDecodeSplits);
}

uint64_t workspace_slots(const SplitkPolicy& policy, uint32_t sm_count, uint32_t num_q_heads,
                         uint32_t max_rows, uint32_t legacy_ref_seqs) {
  if (policy.kind == SplitkPolicy::Kind::kLegacy) return std::max<uint32_t>(sm_count, 1);
  return static_cast<uint64_t>(std::max<uint32_t>(max_rows, 1)) * std::max<uint32_t>(num_q_heads, 1) *
         decode_num_splits(policy, sm_count, num_q_heads, legacy_ref_seqs);
}

uint32_t decode_split_slices(int32_t slices_lever, const SplitkPolicy& policy, uint32_t sm_count,
                             uint32_t num_kv_heads, uint32_t splits, uint32_t max_decode_seqs) {
  if (policy.kind == SplitkPolicy::Kind::kLegacy || splits <= 1) return 1;
  const uint32_t cap = static_cast<uint32_t>(kMaxSplitSlices);
  if (slices_lever > 0) return std::min(static_cast<uint32_t>(slices_lever), cap);
  const uint32_t most = slices_lever < 0 ? std::min(static_cast<uint32_t>(-slices_lever), cap) : cap;
  const uint64_t ctas =
      static_cast<uint64_t>(split_slice_waves(max_decode_seqs)) * std::max<uint32_t>(sm_count, 1);
  const uint64_t pairs =
      static_cast<uint64_t>(std::max<uint32_t>(num_kv_heads, 1)) * splits * std::max<uint32_t>(max_decode_seqs, 1);
  if (2 * pairs > std::max<uint32_t>(sm_count, 1)) return 1;
  return static_cast<uint32_t>(std::clamp<uint64_t>(ctas / pairs, 1, most));
}

int32_t decode_splitk_kernel(uint32_t max_decode_seqs) {
  const uint32_t seqs = std::max<uint32_t>(max_decode_seqs, 1);
  if (seqs == 1) return kSplitkKernelSingle;
  return seqs <= kSplitkNarrowMaxSeqs ? kSplitkKernelNarrow : kSplitkKernelWide;
}

uint32_t split_slice_waves(uint32_t max_decode_seqs) {
  return decode_splitk_kernel(max_decode_seqs) == kSplitkKernelSingle ? 1 : 2;
}

size_t workspace_record_bytes(int32_t head_dim) {
  return static_cast<size_t>(std::max(head_dim, 0) + 2) * sizeof(float);
}

bool gqa_pack_shape_ok(int32_t num_q_heads, int32_t num_kv_heads, int32_t head_dim) {
  if (num_kv_heads <= 0 || num_q_heads <= 0) return false;
  const bool dim_ok = std::find(std::begin(kGqaPackHeadDims), std::end(kGqaPackHeadDims), head_dim) !=
                      std::end(kGqaPackHeadDims);
  if (!dim_ok) return false;
  for (int32_t group : kGqaPackGroups) {
    if (static_cast<int64_t>(num_kv_heads) * group == num_q_heads) return true;
  }
  return false;
}

int32_t splitk_rows_per_cta(int32_t group) {
  const int32_t heads = std::max(group, 1);
  const int32_t parts = (heads + 15) / 16;
  return (heads + parts - 1) / parts;
}

uint64_t gqa_pack_ctas(int32_t num_kv_heads, int32_t num_seqs) {
  return static_cast<uint64_t>(std::max(num_kv_heads, 0)) * static_cast<uint64_t>(std::max(num_seqs, 0));
}

}  // namespace lathe::ops
