#!/usr/bin/env bash
# Session 42, call 1 (session 39's run5.sh, first run here; session 40 moved its prelude and shards into
# scripts/bundle-env.sh and scripts/gtest-shards.sh): the final code's split-K decode (whole-row
# K/V boxes at every head dim, no L2 promotion): gpu_attention's decode tests in 6 shards, then the
# serve kernels' full table (BF16 and FP8 KV, every shape, batch and context, auto+pack and
# auto+pack+slices), SDPA in the same call, and the issue-5 targets tables.
#   scripts/device-bundle.sh -j 2 --bundle full-bundle --xz   (bundle of main ebda34e)
set -uo pipefail
# BUNDLE=full-bundle: one shared-library bundle of everything (602d3fa)
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
mkdir -p $W/serve
F='-*Prefill*:*Legacy*'
echo "gpu_attention: $(scripts/gtest-shards.sh $b/bin/gpu_attention 6 240 $W/attention.txt --gtest_filter="$F")" >>$S
grep -E '^\[  FAILED  \]|Failure|Which is|rel_rms' $W/attention.txt | head -20 >>$S
echo "tests done $((SECONDS - t0))s" >>$S
timeout 100 $b/bin/lathe_bench_attention --out $W/serve --kernels serve --policies auto+pack,auto+pack+slices \
  >$W/serve/bench.txt 2>&1
echo "== bench rc=$? $((SECONDS - t0))s" >>$S
PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
for kv in bf16 fp8; do
  python3 bench/attention/targets.py $W/serve/attention_bench.csv $W/sdpa.csv --b1-policy auto+pack+slices --kv $kv \
    >$W/targets_$kv.txt 2>&1
  echo "== targets $kv" >>$S; tail -3 $W/targets_$kv.txt >>$S
done
cat $S
