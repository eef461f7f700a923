#!/usr/bin/env bash
# Session 52, call 5 (bundle p52s-bundle = main da79032, whose code main's head keeps): the whole
# gpu_attention decode suite on the H100 (eight shards side by side, as sessions 42 and 44 ran it),
# after the slice caps per KV dtype changed the plan's choice for FP8 caches.
#   (bundle as in run4.sh)
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52s-bundle}"
export LATHE_TEST_DEVICE=cuda
echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-330} $W/attention.txt \
  --gtest_brief=1 --gtest_filter='-*Prefill*:*Legacy*') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
