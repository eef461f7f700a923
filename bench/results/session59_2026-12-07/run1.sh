#!/usr/bin/env bash
# Session 59, call 1 (bundle p59-bundle = main 94e7661). The issue-5 tables under main's defaults,
# not re-run since session 57 moved the BF16 CTAs-per-SM rule: the serve kernels under auto+pack and
# auto+pack+slices with PyTorch SDPA in the same call (batch 1 from the target's declaration: `h200`
# auto slices for both dtypes; `h100` none for BF16, `fp8:auto:2`); the fp8 GEMV decode-width table
# with cuBLASLt FP8 in the same process (issue 4); the whole gpu_attention suite but its prefill and
# legacy-rule cases, in 8 shards side by side (main's kernels plus variant 28); the golden outputs
# while the script's elapsed time is under LIMIT s (default 330).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p59-bundle}"
declared_issue5_tables
fp8_table
(
  export LATHE_TEST_DEVICE=cuda
  echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-180} $W/attention.txt \
    --gtest_brief=1 --gtest_filter='-*Prefill*:*Legacy*') $((SECONDS - t0))s" >>$S
)
grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
(( SECONDS - t0 < ${LIMIT:-330} )) && gpu_suite golden gpu_golden_qwen3
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
