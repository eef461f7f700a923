#!/usr/bin/env bash
# Session 62, call 4: bundle p62b-bundle = main cdbed4c (a persistent launch whose units fit one wave
# runs per split; call 3 measured that choice: 24 against 25 by kernel and in decode steps).
# 1. gpu_attention, the whole suite in 8 shards (its prefill and legacy-rule cases too), and
#    gpu_golden_qwen3, on the new code;
# 2. the serve kernel beside 24 and 25 in the same process (BF16, the 8-KV-head shapes, batch
#    2-16, 1k-64k), two processes: the serve should time as 24 where the units fit one wave (up to
#    5 sequences of 32/8/128, 9 of 64/8/128) and as 25 past it, all with 24's bytes.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p62b-bundle}"
(
  export LATHE_TEST_DEVICE=cuda
  echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-200} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
)
grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
gpu_suite golden gpu_golden_qwen3
for r in 1 2; do
  attn_bench "serve r$r" "$W/serve_r$r" 90 --kernels serve,24,25 --policies auto+pack --dtypes bf16 \
    --shapes 32/8/128,64/8/128 --batches 2,4,5,6,8,9,10,12,16 --contexts 1024,4096,16384,65536
done
tar -C $W -cJf $OUT/work.tar.xz . && rm -rf $W
cat $S
