# Session 24, call 3 (s24b-bundle): the decode GEMV tiers 1 and 4 normalising their own input
# (residual add + RMS norm fused into q|k|v and gate|up: one norm launch fewer per site,
# LATHE_FFN_FUSED_NORM, default 4 rows). GPU suites as the default (gpu_cuda_gemv_test with the new
# fused-norm byte-equality cases, gpu_batch_invariance), then decode steps
# with the fusion off (0) against the default, alternated, two rounds: Qwen3-8B-FP8 batch 1/2/4/8,
# Qwen3-32B-FP8 batch 1/4, Qwen3-8B BF16 batch 1/4.
#   scripts/device-bundle.sh --build build --bundle s24b-bundle --xz \
#     --targets "lathe gpu_cuda_gemv_test gpu_batch_invariance"
set -uo pipefail
b=$PWD/s24b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
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
grep -h "FAILED\|Failure\|GemvFusedNorm.*OK" $OUT/gpu_cuda_gemv_test.log | head -20 >>$S
# gpu_golden_qwen3 in the next call (the bundle with it exceeds the 64 MiB carry)
suite gpu_batch_invariance 1
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_off_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-8B-FP8 1,2,4,8
  step 8B-FP8_on_r$r - Qwen3-8B-FP8 1,2,4,8
done
grep -h "fused_norm\|normalise their input" $W/s_8B-FP8_on_r1.log | head -3 >>$S
for r in 1 2; do
  step 32B-FP8_off_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-32B-FP8 1,4
  step 32B-FP8_on_r$r - Qwen3-32B-FP8 1,4
done
for r in 1 2; do
  (( SECONDS - t0 > 420 )) && break
  step 8B_off_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-8B 1,4
  step 8B_on_r$r - Qwen3-8B 1,4
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
