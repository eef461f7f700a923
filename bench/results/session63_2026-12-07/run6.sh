#!/usr/bin/env bash
# Session 63, call 4 (bundle p63b-bundle = main baab131: a persistent split-K grid whose last round
# would run on fewer than half the SMs launches per split; the same bytes).
# 1. gpu_attention, the whole suite in 8 shards;
# 2. the serve kernel beside 24 and 25 where the rule moves a launch (32/8/128 batch 8: 48 CTAs in
#    the last round; 40/8/128 batch 10 and 24: 32 and 24) and beside them (batch 12 and 16), BF16,
#    1k-64k, two processes: 25 (and the serve) should now time as 24 in the moved cells and as
#    before elsewhere.
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
    --shapes 32/8/128,40/8/128,64/8/128 --batches 8,10,12,16,24 --contexts 1024,4096,16384,65536
done
python3 bench/attention/kernel_columns.py $W/rule_r1/attention_bench.csv $W/rule_r2/attention_bench.csv \
  --base 25 >$W/rule_columns.txt 2>&1
tar -C $W -cJf $OUT/work.tar.xz .
cat $S $W/rule_columns.txt
