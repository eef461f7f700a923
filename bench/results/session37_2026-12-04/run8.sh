#!/usr/bin/env bash
# Session 37, call 8 (perf-bundle at the final kernels, 2a682b1). gpu_attention's decode tests
# (6 shards; every serve geometry incl. 26 and 25, the opt-in 21-24, the co-batch tests of all),
# then the serve kernels at the serve's block size (64) for the targets table, with SDPA.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s37c8; rm -rf $W; mkdir -p $W/attn
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
F='-*Prefill*:*Legacy*'
for s in 0 1 2 3 4 5; do
  GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$s timeout 300 $b/bin/gpu_attention --gtest_filter="$F" >$W/attention_$s.txt 2>&1 &
done
wait
for s in 0 1 2 3 4 5; do
  echo "gpu_attention shard $s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$s.txt | tr '\n' ' ') $(tail -1 $W/attention_$s.txt | cut -c1-80)" >>$S
  grep -E '^\[  FAILED  \]|Failure|Expected|Which is|rel_rms' $W/attention_$s.txt | head -10 >>$S
done
echo "tests done $((SECONDS - t0))s" >>$S
timeout 100 $b/bin/lathe_bench_attention --out $W/attn --kernels serve --policies auto+pack,auto+pack+slices \
  >$W/attn.txt 2>&1
echo "== lathe_bench_attention rc=$? $((SECONDS - t0))s" >>$S
PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
for kv in bf16 fp8; do
  python3 bench/attention/targets.py $W/attn/attention_bench.csv $W/sdpa.csv --b1-policy auto+pack+slices --kv $kv \
    >$W/targets_$kv.txt 2>&1
  echo "== targets $kv" >>$S; tail -12 $W/targets_$kv.txt >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
