#!/usr/bin/env bash
# Session 52, call 6 (the last device time; bundle p52-bundle = main 854404d, whose GEMV and
# attention code main's head keeps): on an H200, the figures the issues' targets are stated for
# (the fp8 table with cuBLASLt FP8, decode steps, batch-1 slices of both KV dtypes); on an H100,
# the whole gpu_attention decode suite instead (run5.sh's, with p52s-bundle's binary unavailable
# here: p52-bundle's gpu tests do not include it, so an H100 runs the GEMV suites).
#   (bundle as in run1.sh)
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52-bundle}"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  fp8_table
  export BATCHES=1,4,8,16,32
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
  mkdir -p $W/slices
  timeout 120 $b/bin/lathe_bench_attention --out $W/slices --kernels serve --policies auto+pack+slices \
    --slices 1,2,3 --batches 1 --contexts 16384,65536 >$W/slices/bench.txt 2>&1
  echo "== slices rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' $W/slices/bench.txt | head -1 | cut -c1-60)" >>$S
  grep -E "^[0-9]+/[0-9]+/[0-9]+ " $W/slices/bench.txt | sed 's/  *out [0-9a-f]*$//' >>$S
  (( SECONDS - t0 < 300 )) && decode_suites
else
  decode_suites
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
