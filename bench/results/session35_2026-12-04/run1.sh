#!/usr/bin/env bash
# Session 35, call 1 (perf-bundle at c12fbad, the warp-specialised prefill kernel): gpu_attention's
# prefill tests (plain, then memcheck and racecheck on the head-dim-128 cases), then
# lathe_bench_prefill_attention with both kernels (ws, mma) in one process on the head-dim-128
# shapes, two rounds.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention gpu_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s35c1; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
timeout 150 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/prefill_tests.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/prefill_tests.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure|Expected|Which is' $W/prefill_tests.txt | head -20 >>$S
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 $b/bin/gpu_attention \
    --gtest_filter='Shapes/Prefill.MatchesTheReference/*hd128' >$W/prefill_$tool.txt 2>&1
  echo "$tool rc=$? $((SECONDS - t0))s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/prefill_$tool.txt | tr '\n' ' ')" >>$S
done
for round in 1 2; do
  mkdir -p $W/bench_r$round
  timeout 150 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128,64/8/128 --out $W/bench_r$round \
    >$W/bench_r$round.txt 2>&1
  echo "== bench round $round rc=$? $((SECONDS - t0))s" >>$S
  cat $W/bench_r$round.txt >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
