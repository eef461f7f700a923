#!/usr/bin/env bash
# Session 65: the split reduce by warps (LATHE_ATTN_REDUCE_WARPS, opt-in) on the GPU. Bundle:
# `scripts/device-bundle.sh -j 2 --bundle p65-bundle --xz --targets "lathe lathe_bench_attention
# gpu_attention gpu_golden_qwen3"`.
# 1. the whole gpu_attention suite (8 shards) and gpu_golden_qwen3 with the reduce by warps on (the
#    new SplitReduceByWarpsIsByteNeutral toggles it itself);
# 2. the serve kernels (auto+pack, both KV dtypes, the three issue shapes, batch 1-64, 1k-64k),
#    off / on / off / on in four processes: bench/attention/compare_runs.py --summary per round
#    (output hashes equal in every cell; the speed-up of on);
# 3. decode steps, Qwen3-8B-FP8 and Qwen3-32B-FP8 at 1k, batch 16 and 64, off / on alternated, two
#    rounds (the time left permitting).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p65-bundle}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>$S
(
  export LATHE_TEST_DEVICE=cuda LATHE_ATTN_REDUCE_WARPS=on
  echo "attention (warps on) $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-200} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
  SUITE_TIMEOUT=120 gpu_suite golden gpu_golden_qwen3
)
for r in 1 2; do
  for arm in off on; do
    LATHE_ATTN_REDUCE_WARPS=$arm attn_bench "reduce $arm r$r" "$W/reduce_${arm}_r$r" 90 --kernels serve \
      --policies auto+pack
  done
done
for r in 1 2; do  # speed-up = off's time / on's; the output hashes must agree in every cell
  python3 bench/attention/compare_runs.py $W/reduce_on_r$r/attention_bench.csv \
    $W/reduce_off_r$r/attention_bench.csv --summary >$W/reduce_ab_r$r.txt 2>&1
  echo "compare r$r rc=$? $(tail -1 $W/reduce_ab_r$r.txt)" >>$S
done
grep -E "^\S+\s+(bf16|fp8)\s+(16|64)\s" $W/reduce_ab_r1.txt | head -24 >>$S
BATCHES=16,64
for r in 1 2; do
  for arm in off on; do
    export LATHE_ATTN_REDUCE_WARPS=$arm
    LIMIT=${STEP_LIMIT:-480} step_arm "8b_fp8_${arm}_r$r" Qwen3-8B-FP8 ""
    LIMIT=${STEP_LIMIT:-480} step_arm "32b_fp8_${arm}_r$r" Qwen3-32B-FP8 ""
  done
done
unset LATHE_ATTN_REDUCE_WARPS
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
