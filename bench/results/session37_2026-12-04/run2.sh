#!/usr/bin/env bash
# Session 37, call 2 (perf-bundle at 9cd355e: variant 23, positions as the MMA rows). A one-cell
# canary of 23 first, then gpu_attention's decode tests with 23 as the process variant (4 shards
# side by side) and its prefill tests, then the batch-1 kernels 21 against 23 and the wider
# batches for information.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s37c2; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 25 $b/bin/lathe_bench_attention --out $W --kernels 21,23 --policies auto+pack --batches 1 --contexts 65536 \
  --shapes 32/8/128 --dtypes bf16 >$W/canary.txt 2>&1
rc=$?
echo "canary rc=$rc $((SECONDS - t0))s" >>$S
grep -E '^[0-9]' $W/canary.txt >>$S
if [[ $rc -eq 0 ]]; then
  F='*EveryArmMatchesTheReference*:*SplitKAgreesWithNonSplit*:*SplitKPackingIsByteNeutral*:*ANanQuery*:*SlotsPastTheEnd*:*SplitKSlicesAgree*:*variant23*:*Prefill*'
  for s in 0 1 2 3; do
    LATHE_ATTN_SPLITK_KERNEL=23 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s timeout 280 $b/bin/gpu_attention \
      --gtest_filter="$F" >$W/attention_$s.txt 2>&1 &
  done
  wait
  for s in 0 1 2 3; do
    echo "gpu_attention shard $s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$s.txt | tr '\n' ' ') $(tail -1 $W/attention_$s.txt | cut -c1-80)" >>$S
    grep -E '^\[  FAILED  \]|Failure|Expected|Which is|rel_rms' $W/attention_$s.txt | head -10 >>$S
  done
  echo "tests done $((SECONDS - t0))s" >>$S
  for r in 1 2; do
    timeout 100 $b/bin/lathe_bench_attention --out $W --kernels 21,23 --policies auto+pack,auto+pack+slices --batches 1 \
      --dtypes bf16 >$W/b1_r$r.txt 2>&1
    echo "== batch 1 round $r rc=$? $((SECONDS - t0))s" >>$S
  done
  timeout 100 $b/bin/lathe_bench_attention --out $W --kernels 16,22,23 --policies auto+pack --batches 4,16 --dtypes bf16 \
    --contexts 4096,16384,65536 >$W/wide.txt 2>&1
  echo "== batches 4, 16 rc=$? $((SECONDS - t0))s" >>$S
  grep -hE '^[0-9]' $W/b1_r1.txt $W/b1_r2.txt $W/wide.txt | awk '{print $1,$2,$3,$4,$5,"sl"$10,$13,$14,$18,$20,$23}' >>$S
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
