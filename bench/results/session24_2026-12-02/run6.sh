# Session 24, call 6 (s24e-bundle, 01fd13c): the review's refactors (one GemvProblem builder in the
# backend, the warpgroup staging loops through wg_for_each_word, launch_tier_of; the GEMV kernels'
# SASS differs from 702fc13's by register names only): the GPU suites once more on the final code.
#   scripts/device-bundle.sh --build build --bundle s24e-bundle --xz \
#     --targets "gpu_cuda_gemv_test gpu_golden_qwen3 gpu_batch_invariance"
set -uo pipefail
b=$PWD/s24e-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
suite() {  # name, shards
  local name=$1 shards=$2 pids=() rc=0 t=$SECONDS
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout 200 $b/bin/$name >$W/$name.$i.log 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  cat $W/$name.*.log >$OUT/$name.log
  printf '%-22s rc=%s %4ss passed %s, failed lines %s\n' "$name" "$rc" "$((SECONDS - t))" \
    "$(grep -h '^\[  PASSED  \]' $W/$name.*.log | awk '{n += $4} END {print n + 0}')" \
    "$(grep -c '^\[  FAILED  \]' $OUT/$name.log)" >>$S
}
suite gpu_cuda_gemv_test 4
suite gpu_golden_qwen3 2
suite gpu_batch_invariance 1
# The fused golden path with the lever at 4 rows too (batch 2-4 decode rows fused).
LATHE_FFN_FUSED_NORM=4 timeout 200 $b/bin/gpu_golden_qwen3 >$W/golden_fused4.log 2>&1
echo "gpu_golden_qwen3 LATHE_FFN_FUSED_NORM=4 rc=$? passed $(grep -h '^\[  PASSED  \]' $W/golden_fused4.log | awk '{print $4}')" >>$S
LATHE_FFN_FUSED_NORM=4 timeout 200 $b/bin/gpu_batch_invariance >$W/inv_fused4.log 2>&1
echo "gpu_batch_invariance LATHE_FFN_FUSED_NORM=4 rc=$? passed $(grep -h '^\[  PASSED  \]' $W/inv_fused4.log | awk '{print $4}')" >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
