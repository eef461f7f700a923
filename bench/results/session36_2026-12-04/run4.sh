#!/usr/bin/env bash
# Session 36, call 4 (perf-bundle at the commit below: the ws kernel keeps Q in registers, setmaxnreg
# 64 / 224). gpu_attention's prefill tests and synccheck / racecheck on the head-dim-128 byte test;
# the prefill benchmark at block sizes 64 and 16, and bin/bench_prefill_prev (7296e9f's kernels, Q
# read from shared memory) in the same call; the kv walk probe over 16..128-token blocks; the GEMV
# and GEMM GPU suites (their kernels unchanged this session; last full runs: sessions 31-34).
#
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_prefill_attention lathe_probe_kv_walk \
#     gpu_cuda_gemv_test gpu_cuda_gemm_test" --bundle perf-bundle --xz \
#     --add bench_prefill_prev=/work/bench_prefill_7296e9f
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s36c4; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 100 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/attention.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure|Expected|Which is' $W/attention.txt | head -12 >>$S
for tool in synccheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 3 $b/bin/gpu_attention \
    --gtest_filter='Shapes/Prefill.MatchesTheReference/*hd128' >$W/prefill_$tool.txt 2>&1
  echo "$tool rc=$? $((SECONDS - t0))s: $(grep -E 'SUMMARY' $W/prefill_$tool.txt | tr '\n' ' ')" >>$S
done
for bs in 64 16; do
  for bin in lathe_bench_prefill_attention bench_prefill_prev; do
    timeout 50 $b/bin/$bin --shapes 32/8/128,64/8/128 --kernels ws --block-size $bs >$W/${bin}_bs$bs.txt 2>&1
    echo "== $bin bs=$bs rc=$? $((SECONDS - t0))s" >>$S
    grep -v "gemm pin\|^shape" $W/${bin}_bs$bs.txt >>$S
  done
done
timeout 60 $b/bin/lathe_probe_kv_walk 1 65536 1 16384 16 4096 >$W/probe.txt 2>&1
echo "== probe rc=$? $((SECONDS - t0))s" >>$S
cat $W/probe.txt >>$S
for t in gpu_cuda_gemm_test gpu_cuda_gemv_test; do
  timeout 120 $b/bin/$t >$W/$t.txt 2>&1
  echo "$t rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]' $W/$t.txt | head -5 >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
