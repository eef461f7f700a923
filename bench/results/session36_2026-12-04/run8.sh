#!/usr/bin/env bash
# Session 36, call 8 (perf-bundle at the commit below: the session's final code): gpu_golden_qwen3 and
# gpu_batch_invariance.
#   scripts/device-bundle.sh -j 2 --targets "gpu_golden_qwen3 gpu_batch_invariance" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s36c8; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
for t in gpu_golden_qwen3 gpu_batch_invariance; do
  timeout 120 $b/bin/$t >$W/$t.txt 2>&1
  echo "$t rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ')" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/$t.txt | head -5 >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
