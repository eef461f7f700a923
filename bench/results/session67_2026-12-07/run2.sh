#!/usr/bin/env bash
# Session 67's prepared second call (after run1.sh, the same bundle p67-bundle = 7e537fe): main's
# figures for the status rows on whichever card comes (asked for an H200, the issues' device, whose
# GEMV table and decode steps are unmeasured since session 50):
# 1. the whole default kernel table (every shape, fp8 and bf16, m = 1..32, the read ceiling,
#    cuBLASLt FP8 and cuBLAS BF16 in the same process) into $OUT/full;
# 2. decode steps at 1k context, batch 1 / 4 / 16 / 32: Qwen3-8B-FP8 and Qwen3-8B two rounds each,
#    alternated, then Qwen3-32B-FP8 once (each step's floor from the read ceiling its process
#    measures).
# run1.sh's verdict on the split reduce does not enter: both runs use the default (heads) unless
# LATHE_ATTN_SPLIT_REDUCE is exported by the caller.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p67-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
mkdir -p $OUT/full
timeout 170 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
echo "full table rc=$? $((SECONDS - t0))s" >>$S
sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
export BATCHES=1,4,16,32
for r in 1 2; do
  step_arm 8b_fp8_r$r Qwen3-8B-FP8 ""
  step_arm 8b_bf16_r$r Qwen3-8B ""
done
LIMIT=480 step_arm 32b_fp8 Qwen3-32B-FP8 ""
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
