#!/usr/bin/env bash
# Session 35, call 6 (perf-bundle at the commit below: the partial last BF16 tile released by the
# copying warp, so no producer thread waits more than one phase ahead): gpu_attention's prefill tests,
# the decode tests that run the tensor-copy split-K variants (their maps now come from
# paged_kv_map.cpp) and the co-batch tests, in two shards at once; racecheck on the head-dim-128
# prefill reference cases; gpu_golden_qwen3; the kernel benchmark, one round.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention gpu_golden_qwen3 lathe_bench_prefill_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s35c6; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
F='*Prefill*:*EveryArmMatchesTheReference*:*SplitKPipelineDepthIsByteNeutral*:*SplitKEarlyKvIsByteNeutral*:*CoBatch*'
for shard in 0 1; do
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard timeout 200 $b/bin/gpu_attention --gtest_filter="$F" \
    >$W/attention_$shard.txt 2>&1 &
done
wait
for shard in 0 1; do
  echo "gpu_attention shard $shard $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$shard.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/attention_$shard.txt | head -10 >>$S
done
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $b/bin/gpu_attention \
  --gtest_filter='Shapes/Prefill.MatchesTheReference/*hd128' >$W/prefill_racecheck.txt 2>&1
echo "racecheck rc=$? $((SECONDS - t0))s: $(grep -E 'RACECHECK SUMMARY' $W/prefill_racecheck.txt | tr '\n' ' ')" >>$S
timeout 150 $b/bin/gpu_golden_qwen3 >$W/golden.txt 2>&1
echo "gpu_golden_qwen3 rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/golden.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure' $W/golden.txt | head -10 >>$S
timeout 100 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128,64/8/128 --out $W >$W/bench.txt 2>&1
echo "== bench rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/bench.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
