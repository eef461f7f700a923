#!/usr/bin/env bash
# Session 67, call 3 (failed to start; for the next session). Bundle p67b-bundle = 7fcfe7d (6ae41a1's
# split reduce `auto` by default: the per-head CTAs for one sequence, the warps from two; the byte
# test now checks auto against heads too), `scripts/device-bundle.sh -j 2 --bundle
# p67b-bundle --xz --targets "lathe gpu_attention gpu_golden_qwen3"`:
# 1. Qwen3-8B-FP8 decode steps at 1k, batch 1 / 4 / 16 / 64: the default against heads, alternated,
#    two rounds, and the boot line's split reduce;
# 2. gpu_attention's determinism and co-batch tests under the default (a sequence alone is now
#    merged by the per-head CTAs and beside others by warps: its bytes must not move), 8 shards;
# 3. gpu_golden_qwen3 under the default.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p67b-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
export BATCHES=1,4,16,64
for r in 1 2; do
  step_arm "8b_fp8_default_r$r" Qwen3-8B-FP8 ""
  LATHE_ATTN_SPLIT_REDUCE=heads step_arm "8b_fp8_heads_r$r" Qwen3-8B-FP8 ""
done
grep -ho "split reduce [a-z]*[^,]*" $W/latency_8b_fp8_default_r1.txt $W/latency_8b_fp8_heads_r1.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
(
  export LATHE_TEST_DEVICE=cuda
  echo "attention determinism $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 120 $W/attention.txt \
    --gtest_brief=1 '--gtest_filter=Determinism*:*CoBatch*:*SplitReduce*') $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
)
tar -C $W -cJf $OUT/work.tar.xz .
SUITE_TIMEOUT=170 gpu_suite golden gpu_golden_qwen3
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
