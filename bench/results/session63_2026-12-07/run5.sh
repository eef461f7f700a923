#!/usr/bin/env bash
# Session 63, call 4 (not run). On an H200 (the issues' device): run4.sh, i.e. run2.sh (main's
# status-row tables and steps) into $OUT/h200, then run3.sh (the two leads' kernel sweeps and
# 2-sequence steps). Elsewhere: the single-sequence serve's geometry (26) beside 24 and 16 at batch
# 1, with and without split slices, both KV dtypes, the three issue shapes, two processes (call 3
# had 24 ahead of 16 at batch 1 in most BF16 cells).
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  bash bench/results/session63_2026-12-07/run4.sh
  [[ -f $OUT/h200/summary.txt ]] && cat $OUT/h200/summary.txt
  exit 0
fi
source scripts/bundle-env.sh "${BUNDLE:-p63-bundle}"
for r in 1 2; do
  attn_bench "single r$r" "$W/single_r$r" 90 --kernels 26,24,16 --policies auto+pack,auto+pack+slices \
    --dtypes bf16,fp8 --batches 1 --contexts 1024,4096,16384,65536
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
