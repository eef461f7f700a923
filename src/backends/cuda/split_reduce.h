#pragma once
// Which reduce launch merges a split-K decode launch's records (host-only, pure; tested in
// tests/unit/cuda_host/split_reduce_test.cpp; applied by paged_attention_splitk.cu launch_reduce).
//
// Two reduces give the same bytes (the same arithmetic in the same order, tested on the GPU by
// DecodeArms.SplitReduceIsByteNeutral), so the choice may follow the launch's live batch without
// touching the determinism invariant:
//   kHeadCtas: one CTA of head_dim threads per (sequence, head);
//   kWarps:    a warp per (sequence, head), kReduceWarps heads a CTA, merged in registers; built for
//              unsliced launches of at most kMaxReduceSplits splits only;
//   kAuto:     the default: kHeadCtas for a launch of one sequence, kWarps from two (session 67, one
//              H100, Qwen3-8B-FP8 steps at 1k, four rounds each: the warps took batch 1 from
//              3.627 to 3.651 ms on the mean (+0.7%), batch 4 4.058 -> 4.034, batch 64 9.506 ->
//              9.410 (-1.0%), batch 16 level, and the serve kernels 1% faster on the mean;
//              session 68, an H100, auto itself against kHeadCtas: level at batch 1,
//              1.0-1.3% shorter at 4, 16 and 64; docs/PERFORMANCE.md, "Session 67" and "68").
namespace lathe::cuda {

enum class SplitReduce { kAuto, kHeadCtas, kWarps };

// "auto", "heads" or "warps" (the lever's spellings), for log lines.
inline const char* split_reduce_name(SplitReduce reduce) {
  return reduce == SplitReduce::kWarps ? "warps" : reduce == SplitReduce::kHeadCtas ? "heads" : "auto";
}

// Whether a launch of `num_seqs` sequences, `slices` slices a split and `num_splits` splits is
// reduced by warps under `mode`; `max_warp_splits` is the most splits the warp reduce is built for.
inline bool reduce_by_warps(SplitReduce mode, int num_seqs, int slices, int num_splits, int max_warp_splits) {
  if (slices != 1 || num_splits > max_warp_splits) return false;
  if (mode == SplitReduce::kWarps) return true;
  return mode == SplitReduce::kAuto && num_seqs >= 2;
}

}  // namespace lathe::cuda
