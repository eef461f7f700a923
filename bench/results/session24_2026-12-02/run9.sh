# Session 24, call 9 (s24g-bundle, 69b3381): the final review's fix (a fused-norm problem keeps the
# output-stride and scale checks; two new refusal assertions): gpu_cuda_gemv_test, 4 shards.
#   scripts/device-bundle.sh --build build --bundle s24g-bundle --xz --targets "gpu_cuda_gemv_test"
set -uo pipefail
b=$PWD/s24g-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_cuda_gemv_test >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gpu_cuda_gemv_test.log
echo "gpu_cuda_gemv_test rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gpu_cuda_gemv_test.log)" >>$S
rm -rf $W
cat $S
