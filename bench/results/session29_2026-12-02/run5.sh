# Session 29, call 5 (s29e-bundle, the split slots in tiers 1 and 4, the 16-row tier on its
# counter): gpu_cuda_gemv_test in 4 shards (every row of every tier byte-equal to the 1-row kernel;
# the SwiGLU, QK-norm/RoPE and fused-norm epilogues against their separate kernels; each test ends
# checking every split slot is empty) and gpu_batch_invariance.
#   scripts/device-bundle.sh --build build --bundle s29e-bundle --xz \
#     --targets "gpu_cuda_gemv_test gpu_batch_invariance"  (gpu_cuda_op_test did not fit beside them)
set -uo pipefail
b=$PWD/s29e-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 240 $b/bin/gpu_cuda_gemv_test >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gemv_test.log
echo "gpu_cuda_gemv_test rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gemv_test.log) $((SECONDS - t0))s" >>$S
grep -h "FAILED \]\|split slots left" $OUT/gemv_test.log | head -20 >>$S
for t in gpu_batch_invariance; do
  timeout 300 $b/bin/$t >$OUT/$t.log 2>&1
  echo "$t rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/$t.log | head -3) $((SECONDS - t0))s" >>$S
  grep -h "FAILED \]" $OUT/$t.log | head -10 >>$S
done
rm -rf $W
cat $S
