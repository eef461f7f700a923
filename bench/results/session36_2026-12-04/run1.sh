#!/usr/bin/env bash
# Session 36, call 1 (perf-bundle at the commit below: FP8 KV prefill multiplies in f16, the ws
# kernel's tensor copies take 16/32/64-position boxes by block size). gpu_attention's prefill tests
# (byte equality ws = mma.sync at block sizes 16..128) and the decode tests that use the tensor maps;
# racecheck on one head-dim-128 case; gpu_golden_qwen3; the prefill benchmark at block sizes 16 / 32
# / 64, and main's kernels (bin/bench_prefill_main, same benchmark source) at 16 in the same call.
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention gpu_golden_qwen3 lathe_bench_prefill_attention" \
#     --bundle perf-bundle --xz --add bench_prefill_main=<bench linked with main's kernels>
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s36c1; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
F='*Prefill*:*SplitKPipelineDepthIsByteNeutral*:*SplitKEarlyKvIsByteNeutral*'
for shard in 0 1; do
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=$shard timeout 120 $b/bin/gpu_attention --gtest_filter="$F" \
    >$W/attention_$shard.txt 2>&1 &
done
wait
for shard in 0 1; do
  echo "gpu_attention shard $shard $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention_$shard.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]|Failure|Expected|Which is' $W/attention_$shard.txt | head -12 >>$S
done
timeout 50 compute-sanitizer --tool racecheck --error-exitcode 3 $b/bin/gpu_attention \
  --gtest_filter='Shapes/Prefill.MatchesTheReference/fp8*hd128' >$W/prefill_racecheck.txt 2>&1
echo "racecheck rc=$? $((SECONDS - t0))s: $(grep -E 'RACECHECK SUMMARY' $W/prefill_racecheck.txt | tr '\n' ' ')" >>$S
for bs in 16 64 32; do
  timeout 70 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128,64/8/128 --block-size $bs \
    >$W/bench_bs$bs.txt 2>&1
  echo "== bench bs=$bs rc=$? $((SECONDS - t0))s" >>$S
  grep -v "gemm pin" $W/bench_bs$bs.txt >>$S
done
timeout 60 $b/bin/bench_prefill_main --shapes 32/8/128,64/8/128 --kernels ws >$W/bench_main.txt 2>&1
echo "== main's kernels (ws) bs=16 rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/bench_main.txt >>$S
timeout 120 $b/bin/gpu_golden_qwen3 >$W/golden.txt 2>&1
echo "gpu_golden_qwen3 rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/golden.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure' $W/golden.txt | head -10 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
