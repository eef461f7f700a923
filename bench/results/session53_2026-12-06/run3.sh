#!/usr/bin/env bash
# Session 53, call 3 (bundle p53c-bundle: the code of main de64891, whose bench's --slices takes
# auto:N): the issue-5 targets tables of the serve kernels with SDPA in the same call, under what
# each part declares at batch 1. On an H200 (which declares "auto" for both dtypes) also call 1's
# batch-1 slice sweep (does "auto:2" pay there too?), the tables with "auto:2" at batch 1, the fp8
# table with cuBLASLt FP8 and the decode steps. On an H100 (declares "fp8:auto:2") the batch-1
# rows are whole splits for BF16 and auto's slices at most 2 for FP8.
#   scripts/device-bundle.sh -j 2 --bundle p53c-bundle --targets "lathe lathe_bench_attention lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p53c-bundle}"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1 || h200=0
if (( h200 )); then
  slice_sweep  # call 1's sweep (scripts/bundle-env.sh)
  slices=(--slices auto:8,auto:2)  # auto's cap (the declaration) and at most 2
  b1_bf16=auto+pack+slicesauto
  b1_fp8=auto+pack+slicesauto
else
  slices=(--slices auto:2)  # the declaration: auto's cap at most 2 (FP8), none (BF16)
  b1_bf16=auto+pack
  b1_fp8=auto+pack+slicesauto:2
fi
issue5_tables $b1_bf16 $b1_fp8 "${slices[@]}"  # scripts/bundle-env.sh
if (( h200 )); then
  auto2_targets  # scripts/bundle-env.sh
  fp8_table
  export BATCHES=1,4,8,16,32
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
