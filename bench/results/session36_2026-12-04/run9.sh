#!/usr/bin/env bash
# Session 36, call 9 (perf-bundle at the commit below, branch wip/ws-persistent-dynamic: the persistent grid, units by an atomic counter). A
# one-cell canary first, then gpu_attention's prefill tests, then the prefill
# benchmark (ws) at block sizes 64 and 16 beside bin/bench_prefill_prev (main's kernels, one CTA a unit).
#   scripts/device-bundle.sh -j 2 --targets "gpu_attention lathe_bench_prefill_attention" --bundle perf-bundle \
#     --xz --add bench_prefill_prev=/work/bench_prefill_beb6813   (main's kernels are beb6813's)
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s36c9; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 25 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128 --dtypes bf16 --cells 1x4096 --kernels ws \
  --block-size 64 >$W/canary.txt 2>&1
rc=$?
echo "canary rc=$rc $((SECONDS - t0))s" >>$S
cat $W/canary.txt >>$S
if [[ $rc -eq 0 ]]; then
  timeout 100 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/attention.txt 2>&1
  echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]|Failure|Expected|Which is' $W/attention.txt | head -12 >>$S
  for bs in 64 16; do
    for bin in lathe_bench_prefill_attention bench_prefill_prev; do
      timeout 50 $b/bin/$bin --shapes 32/8/128,64/8/128 --kernels ws --block-size $bs >$W/${bin}_bs$bs.txt 2>&1
      echo "== $bin bs=$bs rc=$? $((SECONDS - t0))s" >>$S
      grep -v "gemm pin\|^shape" $W/${bin}_bs$bs.txt >>$S
    done
  done
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
