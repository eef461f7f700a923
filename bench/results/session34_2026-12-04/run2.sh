#!/usr/bin/env bash
# Session 34, call 2 (perf-bundle at the commit it names: the warpgroup-MMA prefill kernel): the
# prefill tests (new: the wgmma and mma.sync kernels give the same bytes) plain, under memcheck and
# racecheck, then lathe_bench_prefill_attention (both kernels, same process) two rounds, and a
# build whose V descriptor swaps its two offsets (a check of the MN-major layout reading: its
# fingerprints must differ from the mma.sync kernel's if the committed reading is the right one).
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention gpu_attention" --bundle perf-bundle --xz \
#     --add lathe_bench_prefill_attention_altv=/tmp/altv/lathe_bench_prefill_attention_altv
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s34c2; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
timeout 120 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/prefill_tests.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/prefill_tests.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|^\[  SKIPPED \]' $W/prefill_tests.txt | head -30 >>$S
for tool in memcheck racecheck synccheck; do
  filter='Shapes/Prefill.MatchesTheReference/*'; [[ $tool != memcheck ]] && filter='Shapes/Prefill.MatchesTheReference/*hd128'
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 $b/bin/gpu_attention --gtest_filter="$filter" \
    >$W/prefill_$tool.txt 2>&1
  echo "$tool rc=$? $((SECONDS - t0))s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/prefill_$tool.txt | tr '\n' ' ')" >>$S
done
for round in 1 2; do
  mkdir -p $W/bench_r$round
  timeout 120 $b/bin/lathe_bench_prefill_attention --out $W/bench_r$round >$W/bench_r$round.txt 2>&1
  echo "== lathe_bench_prefill_attention round $round rc=$? $((SECONDS - t0))s" >>$S
  grep -v "gemm pin" $W/bench_r$round.txt >>$S
done
timeout 60 $b/bin/lathe_bench_prefill_attention_altv --shapes 32/8/128 --dtypes bf16 --cells 16x1024 >$W/altv.txt 2>&1
echo "== altv rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/altv.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
