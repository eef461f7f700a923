#!/usr/bin/env bash
# Session 37, call 9: the graph-replay test under contention, six processes side by side, each
# repeating it 40 times: 2a682b1's test binary (poison memsets on the legacy stream, unsynchronised)
# against the fixed one (perf-bundle at the fix's commit).
#   scripts/device-bundle.sh -j 2 --targets gpu_attention --bundle perf-bundle --xz \
#     --add gpu_attention_old=/work/gpu_attention_2a682b1
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" >/dev/null 2>&1 || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64" LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s37c9; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
for bin in gpu_attention_old gpu_attention; do
  for s in 0 1 2 3 4 5; do
    timeout 50 $b/bin/$bin --gtest_filter='Determinism.GraphReplayReadsDeviceLengths:Determinism.MixedStep*' \
      --gtest_repeat=40 >$W/${bin}_$s.txt 2>&1 &
  done
  wait
  echo "$bin: OK $(cat $W/${bin}_*.txt | grep -c '^\[       OK \]') FAILED $(cat $W/${bin}_*.txt | grep -c '^\[  FAILED  \] Determ.*ms)')" >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
