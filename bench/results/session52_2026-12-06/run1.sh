#!/usr/bin/env bash
# Session 52, call 1 (an H200 asked for; bundle p52-bundle = main 854404d, which session 51's
# no-wait rows (274ae66) reached with comments changed only): main's final build through every
# decode suite (the full gpu_cuda_gemv_test and gpu_cuda_op_test had not run on 274ae66's code),
# the fp8 decode-width table with cuBLASLt FP8, decode steps; then the batch-1 split slices of the
# single-sequence attention geometry (26) swept at 16k / 64k, and the Qwen3-8B-FP8 batch-1 step at
# 16k / 32k under 1, 2 and 3 slices (auto gives its 72 (KV head, split) pairs none); last, one
# Nsight Compute profile of the 16-row tier on Qwen3-8B q|o (4096 x 4096, fp8).
#   scripts/device-bundle.sh -j 2 --bundle p52-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels lathe_bench_attention" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52-bundle}"
decode_suites
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa LATHE_GEMV_TEST_VARIANT_BF16=auto:sa \
  GTEST_FILTER='*EveryRowOfEveryTier*:*SharedSplitSum*'
fp8_table
export BATCHES=1,4,8,16,32
for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
# Batch-1 attention, the single-sequence geometry under 1-6 slices per split (BF16 and FP8 KV).
mkdir -p $W/slices
timeout 180 $b/bin/lathe_bench_attention --out $W/slices --kernels serve --policies auto+pack+slices \
  --slices 1,2,3,4,6 --batches 1 --contexts 16384,65536 >$W/slices/bench.txt 2>&1
echo "== slices rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' $W/slices/bench.txt | head -1 | cut -c1-60)" >>$S
grep -E "^[0-9]+/[0-9]+/[0-9]+ " $W/slices/bench.txt | sed 's/  *out [0-9a-f]*$//' >>$S
# Qwen3-8B-FP8 batch-1 steps at 16k / 32k context, slices 1 / 2 / 3 alternated, two rounds.
for r in 1 2; do
  for len in 16384 32768; do
    for sl in 1 2 3; do
      (( SECONDS - t0 < ${LIMIT:-420} )) || continue
      f=$W/long_${len}_s${sl}_r$r.txt
      LATHE_ATTN_DECODE_SPLIT_SLICES=$sl timeout 90 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 \
        --load-format dummy --device cuda --input-len $len --batch-sizes 1 --output-len 32 >$f 2>&1
      echo "long L$len slices $sl r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms %s  ", $1, $4, $5}' $f) $((SECONDS - t0))s" >>$S
    done
  done
done
if (( SECONDS - t0 < 500 )); then
  timeout 60 ncu --clock-control none --set full -k regex:gemv_kernel -s 3 -c 1 $b/bin/lathe_bench_kernels \
    --variants --variant-list auto --no-peers --only qwen3-8b/q --widths 16 --dtype fp8 >$W/ncu_q_o_m16.txt 2>&1
  echo "ncu q|o m=16 rc=$? $((SECONDS - t0))s" >>$S
  grep -E "Duration|DRAM Throughput|Registers Per|Grid Size|Issue Slots Busy|No Eligible|Achieved Occupancy" \
    $W/ncu_q_o_m16.txt | head -12 >>$S
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
