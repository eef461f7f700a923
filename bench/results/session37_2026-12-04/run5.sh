#!/usr/bin/env bash
# Session 37, call 5 (perf-bundle at the commit of position rows with FP8 KV, 23 / 25 the serve
# geometries). Canary (FP8, 23), then gpu_attention's decode tests (the process variant the new
# default; every serve geometry, 21, 22, 24, 26 inside the tests, the co-batch tests of all), then
# the FP8 kernels: batch 1 under 21 / 23 / 26, batches 4-64 under 16 / 22 / 24 / 25, two rounds.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s37c5; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 25 $b/bin/lathe_bench_attention --out $W --kernels 21,23 --policies auto+pack --batches 1 --contexts 65536 \
  --shapes 32/8/128 --dtypes fp8 >$W/canary.txt 2>&1
rc=$?
echo "canary rc=$rc $((SECONDS - t0))s" >>$S
grep -E '^[0-9]' $W/canary.txt >>$S
if [[ $rc -eq 0 ]]; then
  F='-*Prefill*:*Legacy*:*GqaPacked*:*Dispatch*'
  for s in 0 1 2 3 4 5; do
    GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$s timeout 330 $b/bin/gpu_attention --gtest_filter="$F" >$W/attention_$s.txt 2>&1 &
  done
  wait
  for s in 0 1 2 3 4 5; do
    echo "gpu_attention shard $s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$s.txt | tr '\n' ' ') $(tail -1 $W/attention_$s.txt | cut -c1-80)" >>$S
    grep -E '^\[  FAILED  \]|Failure|Expected|Which is|rel_rms' $W/attention_$s.txt | head -10 >>$S
  done
  echo "tests done $((SECONDS - t0))s" >>$S
  for r in 1 2; do
    timeout 60 $b/bin/lathe_bench_attention --out $W --kernels 21,23,26 --policies auto+pack+slices --batches 1 \
      --dtypes fp8 >$W/b1_r$r.txt 2>&1
    echo "== batch 1 round $r rc=$? $((SECONDS - t0))s" >>$S
    timeout 100 $b/bin/lathe_bench_attention --out $W --kernels 16,22,24,25 --policies auto+pack --batches 4,16,64 \
      --dtypes fp8 >$W/wide_r$r.txt 2>&1
    echo "== batches 4-64 round $r rc=$? $((SECONDS - t0))s" >>$S
  done
  grep -hE '^[0-9]' $W/b1_r1.txt | awk '{print $1,$2,$3,$4,"sl"$10,$13,$14,$18,$20,$23}' >>$S
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
