#!/usr/bin/env bash
# Session 52, call 6 (the last device time; bundle p52f-bundle = main 23828af, the code of da79032):
# on an H200, the figures the issues' targets are stated for (the fp8 table with cuBLASLt FP8,
# decode steps, batch-1 slices of both KV dtypes) and the golden and invariance suites; on an
# H100, the whole gpu_attention decode suite instead (eight shards side by side, as sessions 42
# and 44 ran it).
#   scripts/device-bundle.sh -j 2 --bundle p52f-bundle --targets "lathe gpu_attention lathe_bench_kernels lathe_bench_attention gpu_golden_qwen3 gpu_batch_invariance" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52f-bundle}"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  fp8_table
  export BATCHES=1,4,8,16,32
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
  mkdir -p $W/slices
  timeout 120 $b/bin/lathe_bench_attention --out $W/slices --kernels serve --policies auto+pack+slices \
    --slices 1,2,3 --batches 1 --contexts 16384,65536 >$W/slices/bench.txt 2>&1
  echo "== slices rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' $W/slices/bench.txt | head -1 | cut -c1-60)" >>$S
  grep -E "^[0-9]+/[0-9]+/[0-9]+ " $W/slices/bench.txt | sed 's/  *out [0-9a-f]*$//' >>$S
  gpu_suite golden gpu_golden_qwen3
  gpu_suite invariance gpu_batch_invariance
else
  export LATHE_TEST_DEVICE=cuda
  echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-300} $W/attention.txt \
    --gtest_brief=1 --gtest_filter='-*Prefill*:*Legacy*') $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
