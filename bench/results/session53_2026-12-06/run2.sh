#!/usr/bin/env bash
# Session 53, call 2 (bundle p53b-bundle = main 85a2c0e: "auto:N" slice caps, the h100 declaration
# "fp8:auto:2"): the boot line; gpu_attention's slice / reference / workspace tests, the golden and
# batch-invariance suites; the Qwen3-32B-FP8 batch-1 decode step with an FP8 KV cache at 4k / 16k /
# 32k under the declaration against the previous one (LATHE_ATTN_DECODE_SPLIT_SLICES=fp8:auto on an
# H100, =auto:2 on an H200, whose declaration is "auto"), alternated, two rounds. On an H200 first:
# call 1's batch-1 slice sweep, the fp8 table with cuBLASLt FP8 and the decode steps.
#   scripts/device-bundle.sh -j 2 --bundle p53b-bundle --targets "lathe gpu_attention lathe_bench_attention lathe_bench_kernels gpu_golden_qwen3 gpu_batch_invariance" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p53b-bundle}"
echo "info: $($b/bin/lathe info 2>&1 | grep 'target defaults')" >>$S
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1 || h200=0
if (( h200 )); then
  slice_sweep  # the batch-1 slice sweep (scripts/bundle-env.sh)
  fp8_table
  export BATCHES=1,4,8,16,32
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
  prev=auto:2
else
  prev=fp8:auto
fi
gpu_suite slices gpu_attention GTEST_FILTER='*SplitKSlicesAgree*:*RefusesAShortWorkspace*:*EveryArmMatchesTheReference*'
gpu_suite golden gpu_golden_qwen3
gpu_suite invariance gpu_batch_invariance
for r in 1 2; do
  for len in 4096 16384 32768; do
    for arm in decl prev; do
      (( SECONDS - t0 < ${LIMIT:-500} )) || continue
      f=$W/fp8kv_32b_${len}_${arm}_r$r.txt
      env $([[ $arm == prev ]] && echo LATHE_ATTN_DECODE_SPLIT_SLICES=$prev) timeout 100 $b/bin/lathe bench latency \
        configs/Qwen3-32B-FP8 --load-format dummy --device cuda --kv-cache-dtype fp8 --input-len $len \
        --batch-sizes 1 --output-len 32 >$f 2>&1
      echo "fp8kv 32B L$len $arm r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $(grep -o 'attn_decode_split_slices=[^ ]*\( (env)\)\?' $f | head -1) $((SECONDS - t0))s" >>$S
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
