#!/usr/bin/env bash
# Session 34, call 3 (perf-bundle at the commit it names: the mma.sync prefill kernel with the
# flash-attention-2 softmax): the prefill tests plain, under memcheck and racecheck, then three
# builds of lathe_bench_prefill_attention alternating, two rounds: main 47c31a4's kernel (_old),
# 1294801's (128-row CTAs, the seed's softmax; _1294801) and this commit's.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention gpu_attention" --bundle perf-bundle --xz \
#     --add lathe_bench_prefill_attention_old=/tmp/oldpf/lathe_bench_prefill_attention_old \
#     --add lathe_bench_prefill_attention_1294801=/tmp/k1294801/lathe_bench_prefill_attention_1294801
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s34c3; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
timeout 120 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/prefill_tests.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/prefill_tests.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure|actual' $W/prefill_tests.txt | head -30 >>$S
for tool in memcheck racecheck; do
  filter='Shapes/Prefill.MatchesTheReference/*'; [[ $tool != memcheck ]] && filter='Shapes/Prefill.MatchesTheReference/*hd128'
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 $b/bin/gpu_attention --gtest_filter="$filter" \
    >$W/prefill_$tool.txt 2>&1
  echo "$tool rc=$? $((SECONDS - t0))s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/prefill_$tool.txt | tr '\n' ' ')" >>$S
done
for round in 1 2; do
  for bin in lathe_bench_prefill_attention_old lathe_bench_prefill_attention_1294801 lathe_bench_prefill_attention; do
    mkdir -p $W/${bin}_r$round
    timeout 120 $b/bin/$bin --out $W/${bin}_r$round >$W/${bin}_r$round.txt 2>&1
    echo "== $bin round $round rc=$? $((SECONDS - t0))s" >>$S
    grep -v "gemm pin" $W/${bin}_r$round.txt >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
