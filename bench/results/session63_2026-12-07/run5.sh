#!/usr/bin/env bash
# Session 63, call 4. On an H200 (the issues' device): run2.sh (main's status-row tables and steps)
# into $OUT/h200, then run3.sh's kernel sweeps (no steps). Elsewhere: the single-sequence serve's
# geometry (26) beside 24 and 16 at batch 1, with and without split slices, both KV dtypes, the three
# issue shapes, two processes (call 3 had 24 ahead of 16 at batch 1 in most BF16 cells).
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  (OUT=$OUT/h200; mkdir -p $OUT; bash bench/results/session63_2026-12-07/run2.sh)
  source scripts/bundle-env.sh "${BUNDLE:-p63-bundle}"
  for r in 1 2; do
    for cap in auto 2 3; do
      LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap r$r" "$W/cap${cap}_r$r" 60 --kernels 24,25 \
        --policies auto+pack --dtypes bf16 --shapes 32/8/128,40/8/128,64/8/128 --batches 6,8,10,12,16,24,32 \
        --contexts 1024,4096,65536
    done
    attn_bench "narrow r$r" "$W/narrow_r$r" 90 --kernels 16,24,25 --policies auto+pack,auto+pack+slices \
      --dtypes bf16,fp8 --batches 1,2 --contexts 1024,4096,16384,65536
  done
else
  source scripts/bundle-env.sh "${BUNDLE:-p63-bundle}"
  for r in 1 2; do
    attn_bench "single r$r" "$W/single_r$r" 90 --kernels 26,24,16 --policies auto+pack,auto+pack+slices \
      --dtypes bf16,fp8 --batches 1 --contexts 1024,4096,16384,65536
  done
fi
tar -C $W -cJf $OUT/work.tar.xz .
[[ -f $OUT/h200/summary.txt ]] && cat $OUT/h200/summary.txt
cat $S
