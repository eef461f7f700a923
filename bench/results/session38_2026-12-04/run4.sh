#!/usr/bin/env bash
# Session 38, call 4 (perf-bundle at 284f6fe: K/V copies without L2 promotion; 25's persistent
# grid at head dim 256). Canary (24 / 25 at 24/4/256 batch 16); gpu_attention's decode tests in 6
# shards; the serve kernels at the new default and with 256-byte promotion (the old default), BF16
# and FP8, every batch and context; 24 against 25 at head dim 256; SDPA; the targets tables.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s38c4; rm -rf $W; mkdir -p $W/new $W/old
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
B=$b/bin/lathe_bench_attention
timeout 60 $B --kernels 24,25 --shapes 24/4/256 --batches 4,16,64 --policies auto+pack >$W/hd256.txt 2>&1
echo "== canary / hd256 24 vs 25 rc=$? $((SECONDS - t0))s" >>$S
grep -hE '^[0-9]' $W/hd256.txt | awk '{print $1,$2,$3,$4,$13,$14,$18,$23}' >>$S
F='-*Prefill*:*Legacy*'
for s in 0 1 2 3 4 5; do
  GTEST_TOTAL_SHARDS=6 GTEST_SHARD_INDEX=$s timeout 300 $b/bin/gpu_attention --gtest_filter="$F" >$W/attention_$s.txt 2>&1 &
done
wait
for s in 0 1 2 3 4 5; do
  echo "gpu_attention shard $s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$s.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]|Failure|Which is|rel_rms' $W/attention_$s.txt | head -10 >>$S
done
echo "tests done $((SECONDS - t0))s" >>$S
timeout 100 $B --out $W/new --kernels serve --policies auto+pack,auto+pack+slices >$W/new/bench.txt 2>&1
echo "== bench new rc=$? $((SECONDS - t0))s" >>$S
timeout 100 $B --out $W/old --kv-l2-promotion 256 --kernels serve --policies auto+pack,auto+pack+slices >$W/old/bench.txt 2>&1
echo "== bench old (256 B promotion) rc=$? $((SECONDS - t0))s" >>$S
PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
for run in new old; do
  for kv in bf16 fp8; do
    python3 bench/attention/targets.py $W/$run/attention_bench.csv $W/sdpa.csv --b1-policy auto+pack+slices --kv $kv \
      >$W/targets_${run}_$kv.txt 2>&1
    echo "== targets $run $kv" >>$S; tail -3 $W/targets_${run}_$kv.txt >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
