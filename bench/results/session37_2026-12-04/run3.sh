#!/usr/bin/env bash
# Session 37, call 3 (perf-bundle at the commit of variants 24 and 25). Canary, then gpu_attention's
# decode tests with 25 as the process variant (every serve geometry and 23-25 run inside each test),
# the position-row co-batch tests and 25 = 24's bytes, then the kernels: batch 1 under 21 / 23,
# wider batches under 16 / 22 / 23 / 24 / 25, two rounds, BF16 and FP8 (FP8 launches the twins),
# and SDPA for the targets table.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s37c3; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 25 $b/bin/lathe_bench_attention --out $W --kernels 22,24,25 --policies auto+pack --batches 16 --contexts 4096 \
  --shapes 32/8/128 --dtypes bf16 >$W/canary.txt 2>&1
rc=$?
echo "canary rc=$rc $((SECONDS - t0))s" >>$S
grep -E '^[0-9]' $W/canary.txt >>$S
if [[ $rc -eq 0 ]]; then
  F='*EveryArmMatchesTheReference*:*SplitKAgreesWithNonSplit*:*SplitKPackingIsByteNeutral*:*ANanQuery*:*SlotsPastTheEnd*:*SplitKSlicesAgree*:*PipelineDepth*:PositionRows*:*GraphReplay*:*MixedStep*'
  for s in 0 1 2 3; do
    LATHE_ATTN_SPLITK_KERNEL=25 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s timeout 300 $b/bin/gpu_attention \
      --gtest_filter="$F" >$W/attention_$s.txt 2>&1 &
  done
  wait
  for s in 0 1 2 3; do
    echo "gpu_attention shard $s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$s.txt | tr '\n' ' ') $(tail -1 $W/attention_$s.txt | cut -c1-80)" >>$S
    grep -E '^\[  FAILED  \]|Failure|Expected|Which is|rel_rms' $W/attention_$s.txt | head -10 >>$S
  done
  echo "tests done $((SECONDS - t0))s" >>$S
  for r in 1 2; do
    timeout 100 $b/bin/lathe_bench_attention --out $W --kernels 21,23 --policies auto+pack+slices --batches 1 \
      >$W/b1_r$r.txt 2>&1
    echo "== batch 1 round $r rc=$? $((SECONDS - t0))s" >>$S
    timeout 200 $b/bin/lathe_bench_attention --out $W --kernels 16,22,24,25 --policies auto+pack --batches 4,16,64 \
      >$W/wide_r$r.txt 2>&1
    echo "== batches 4-64 round $r rc=$? $((SECONDS - t0))s" >>$S
  done
  PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
  echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
  grep -hE '^[0-9]' $W/b1_r1.txt $W/wide_r1.txt | grep ' bf16 ' | awk '{print $1,$2,$3,$4,"sl"$10,$13,$14,$18,$20,$23}' >>$S
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
