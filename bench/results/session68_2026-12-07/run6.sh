#!/usr/bin/env bash
# Session 68, last call (bundle p67b-bundle = main 4ec988e's code, whose kernels main has again
# since 090eba8). On an H200: session 67's run2.sh as it is (the whole kernel table with cuBLASLt
# FP8 and cuBLAS BF16; decode steps of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8 at batch 1 / 4 /
# 16 / 32). On an H100: the split reduce `auto` against heads on the models call 1 did not run,
# Qwen3-32B-FP8 (5 splits) and Qwen3-8B BF16, batch 1 / 16 / 64, alternated, one round.
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUNDLE=${BUNDLE:-p67b-bundle} exec bash bench/results/session67_2026-12-07/run2.sh
fi
source scripts/bundle-env.sh "${BUNDLE:-p67b-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
export BATCHES=1,16,64
for model in Qwen3-32B-FP8 Qwen3-8B; do
  tag=$(echo "$model" | tr 'A-Z-' 'a-z_')
  step_arm "${tag}_default" "$model" ""
  LATHE_ATTN_SPLIT_REDUCE=heads step_arm "${tag}_heads" "$model" ""
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
