#!/usr/bin/env bash
# Session 69's prepared first call (not run in session 69: no machine could be started). BUNDLE
# (p70-bundle by default) holds main's kernels and defaults, with the opt-in variants 29 and 30.
# On an H100 (whose figures are recent): run3.sh, the variant A/B. On an H200 (the issues' device;
# its GEMV table and decode steps are unmeasured since session 50), within the device time left:
# the whole kernel table (every shape, fp8 and bf16, m = 1..32, the read ceiling, cuBLASLt FP8
# and cuBLAS BF16 in the same process) into $OUT/full; decode steps at 1k context, batch 1 / 4 /
# 16 / 32, of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8, one run each, while the time gates allow;
# then one round of run3.sh's batch-1 FP8 A/B (26 against 29 and 30, auto slices as `h200`
# declares).
set -uo pipefail
export BUNDLE=${BUNDLE:-p70-bundle}
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash bench/results/session69_2026-12-08/run3.sh
fi
source scripts/bundle-env.sh "$BUNDLE"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
mkdir -p $OUT/full
timeout 170 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
echo "full table rc=$? $((SECONDS - t0))s" >>$S
sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
export BATCHES=1,4,16,32
LIMIT=260 step_arm 8b_fp8 Qwen3-8B-FP8 ""
LIMIT=300 step_arm 8b_bf16 Qwen3-8B ""
LIMIT=330 step_arm 32b_fp8 Qwen3-32B-FP8 ""
tar -C $W -cJf $OUT/work.tar.xz .
(( SECONDS - t0 < 400 )) && attn_bench "b1 r1" "$W/b1_r1" 120 --kernels serve,29,30 --policies auto+pack,auto+pack+slices \
  --batches 1 --contexts 4096,16384,65536 --dtypes fp8
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
