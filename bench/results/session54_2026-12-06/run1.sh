#!/usr/bin/env bash
# Session 54, call 1 (bundle p53c-bundle: main de64891's code; main's source differs since only in
# a comment and a log message): session 53's run3 (the issue-5 targets tables under each part's
# declared batch-1 caps; on an H200 also the batch-1 slice sweep, the tables with "auto:2", the fp8
# table and the decode steps), then two open questions on either part: the split-K length floor
# with the split rule on wide serves at 1k-4k (floor_sweep), and the FP8 slice floor 128 against
# 256 at batch 1 (slice_floor_ab).
#   scripts/device-bundle.sh -j 2 --bundle p53c-bundle --targets "lathe lathe_bench_attention lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p53c-bundle}"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1 || h200=0
if (( h200 )); then
  slice_sweep  # session 53's batch-1 slice sweep (scripts/bundle-env.sh)
  slices=(--slices auto:8,auto:2)  # auto's cap (the h200 declaration) and at most 2
  b1_bf16=auto+pack+slicesauto
  b1_fp8=auto+pack+slicesauto
  b1_cap=auto:8
else
  slices=(--slices auto:2)  # the h100 declaration: auto's cap at most 2 (FP8), none (BF16)
  b1_bf16=auto+pack
  b1_fp8=auto+pack+slicesauto:2
  b1_cap=auto:2
fi
issue5_tables $b1_bf16 $b1_fp8 "${slices[@]}"
if (( h200 )); then
  auto2_targets  # scripts/bundle-env.sh
fi
floor_sweep
slice_floor_ab $b1_cap
if (( h200 )); then
  fp8_table
  export BATCHES=1,4,8,16,32 LIMIT=480
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
