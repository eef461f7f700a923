#pragma once
// The records a split-K decode launch leaves in its workspace, described for whoever merges them:
// the split reduce (paged_attention_splitk.cu) or, in a decode step that defers the reduce, the
// o projection's GEMV as it stages its input (gemv_split_merge.cuh). Host and device code.
//
// Layout: f32 [num_seqs, num_heads, num_splits * slices, head_dim + 2]; record slot
// split * slices + slice holds a partial output scaled by that slice's own running max, then the
// max (log2 domain) and the running sum. Which slots a sequence used follows from its own length
// (split_length.h): every split's slot 0 when splits are not sliced (an empty split writes a
// neutral record: output 0, max -inf, sum 0), else the slices each split used (at least one).
#include <cstdint>

#include "backends/cuda/split_length.h"

#if defined(__CUDACC__)
#define LATHE_RECORDS_FN __host__ __device__ __forceinline__
#else
#define LATHE_RECORDS_FN inline
#endif

namespace lathe::cuda {

struct SplitRecords {
  const float* records = nullptr;  // null: no records (nothing deferred)
  const int32_t* context_lens = nullptr;  // [num_seqs], device
  int32_t num_seqs = 0;
  int32_t num_heads = 0;
  int32_t head_dim = 0;
  int32_t num_splits = 1;
  int32_t slices = 1;  // record slots per split; 1: every split's record is used
  int32_t min_kv_per_slice = 1;
  int32_t min_kv_per_split = 1;
  int32_t split_rule = 0;  // SplitRule, as the split kernel applied it
};

// Record slots per (sequence, head).
LATHE_RECORDS_FN int split_record_slots(const SplitRecords& r) { return r.num_splits * r.slices; }

// Slots split s of a sequence of length len used, given that sequence's split length `per`
// (split_length): its used slices, at least 1 (an empty split's neutral record). Sliced records
// only.
LATHE_RECORDS_FN int split_used_slots(const SplitRecords& r, int len, int per, int s) {
  const int64_t first = static_cast<int64_t>(s) * per;
  const int64_t left = static_cast<int64_t>(len) - first;
  const int n = left <= 0 ? 0 : static_cast<int>(left < per ? left : per);
  const int used = split_slices_used(n, r.slices, r.min_kv_per_slice);
  return used > 1 ? used : 1;
}

}  // namespace lathe::cuda

#undef LATHE_RECORDS_FN
