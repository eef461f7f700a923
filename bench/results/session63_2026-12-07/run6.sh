#!/usr/bin/env bash
# Session 63, call 4 (bundle p63b-bundle = main baab131: a persistent split-K grid whose last round
# would run on fewer than half the SMs launches per split; the same bytes).
# 1. gpu_attention, the whole suite in 8 shards;
# 2. the serve kernel beside 24 and 25 where the rule moves a launch and beside them, BF16, 1k-64k,
#    two processes: 25 (and the serve) should now time as 24 in the moved cells (last-round CTAs in
#    brackets: 32/8/128 batch 8 (48); 40/8/128 batch 10 (32) and 24 (24); never measured before:
#    64/8/128 batch 14 (32), 20 (8) and 21 (48); 16/8/128 (16 splits) batch 17 (64), 23 (40), 25 (32)
#    and 31 (8)) and as before elsewhere. The persistent grid those never-measured cells ran before
#    baab131 is not reachable on this bundle (25 applies the rule): the same bench with
#    BUNDLE=<a bundle of 5d68aea> (another call: two bundles pass the carry limit) gives the before.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p63b-bundle}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>$S
(
  export LATHE_TEST_DEVICE=cuda
  echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-200} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
)
grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
for r in 1 2; do
  attn_bench "rule r$r" "$W/rule_r$r" 60 --kernels serve,24,25 --policies auto+pack --dtypes bf16 \
    --shapes 32/8/128,40/8/128,64/8/128 --batches 8,10,12,14,16,20,21,24 --contexts 1024,4096,16384,65536
  attn_bench "rule small r$r" "$W/rule_small_r$r" 60 --kernels serve,24,25 --policies auto+pack --dtypes bf16 \
    --shapes 16/8/128 --batches 16,17,18,23,24,25,31,32 --contexts 1024,4096,16384,65536
done
for run in rule rule_small; do
  python3 bench/attention/kernel_columns.py $W/${run}_r1/attention_bench.csv $W/${run}_r2/attention_bench.csv \
    --base 25 >$W/${run}_columns.txt 2>&1
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S $W/rule_columns.txt $W/rule_small_columns.txt
