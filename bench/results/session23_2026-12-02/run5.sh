# Session 23, call 5 (wg-bundle, commit 3ee762e): `auto` takes ":wg" for fp8 weights on the three-CTA
# register ring (Qwen3-8B gate|up). gpu_cuda_gemv_test as the default, gpu_golden_qwen3,
# gpu_batch_invariance, then Qwen3-8B-FP8 steps with the new default against the old choice for
# that shape (LATHE_GEMV_SHAPE_VARIANTS=fp8/24576x4096=ring:k2:g16:b3), alternated, two rounds.
set -uo pipefail
b=$PWD/wg-bundle
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
suite gpu_golden_qwen3 2
suite gpu_batch_invariance 1
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
old=LATHE_GEMV_SHAPE_VARIANTS=fp8/24576x4096=ring:k2:g16:b3
for r in 1 2; do
  (( SECONDS - t0 > 200 )) && break
  step 8B-FP8_old_r$r $old Qwen3-8B-FP8 1,4,8,12,16
  step 8B-FP8_new_r$r - Qwen3-8B-FP8 1,4,8,12,16
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
