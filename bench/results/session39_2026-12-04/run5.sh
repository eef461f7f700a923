#!/usr/bin/env bash
# Session 39, call 5: the final code's split-K decode (whole-row K/V boxes at every head dim, no L2
# promotion): gpu_attention's decode tests in 6 shards, then the serve kernels' full table (BF16
# and FP8 KV, every shape, batch and context, auto+pack and auto+pack+slices), SDPA in the same
# call, and the issue-5 targets tables.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_attention" --bundle attn-bundle --xz
set -uo pipefail
b=$PWD/${BUNDLE:-attn-bundle}  # BUNDLE=full-bundle: one shared-library bundle of everything (602d3fa)
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; rm -rf $W; mkdir -p $W/serve
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
F='-*Prefill*:*Legacy*'
for s in 0 1 2 3 4 5; do
  GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$s timeout 240 $b/bin/gpu_attention --gtest_filter="$F" >$W/attention_$s.txt 2>&1 &
done
wait
for s in 0 1 2 3 4 5; do
  echo "gpu_attention shard $s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$s.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]|Failure|Which is|rel_rms' $W/attention_$s.txt | head -10 >>$S
done
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
