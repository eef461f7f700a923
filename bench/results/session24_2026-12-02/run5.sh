# Session 24, call 5 (s24d-bundle): the fused residual add + norm with its new default (decode steps
# of 1 row, LATHE_FFN_FUSED_NORM=1): gpu_batch_invariance (a sequence alone now takes the fused
# path, beside others the separate norm: the bytes must agree), gpu_golden_qwen3, then decode steps
# with the fusion off (0) against the default, alternated, two rounds: Qwen3-8B-FP8 batch 1/4/16,
# Qwen3-32B-FP8 batch 1, Qwen3-8B BF16 batch 1.
#   scripts/device-bundle.sh --build build --bundle s24d-bundle --xz \
#     --targets "lathe gpu_batch_invariance gpu_golden_qwen3"
set -uo pipefail
b=$PWD/s24d-bundle
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
suite gpu_batch_invariance 1
suite gpu_golden_qwen3 2
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_off_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-8B-FP8 1,4,16
  step 8B-FP8_on_r$r - Qwen3-8B-FP8 1,4,16
done
grep -h "ffn_fused_norm\|normalise it" $W/s_8B-FP8_on_r1.log | head -2 >>$S
for r in 1 2; do
  step 32B-FP8_off_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-32B-FP8 1
  step 32B-FP8_on_r$r - Qwen3-32B-FP8 1
  step 8B_off_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-8B 1
  step 8B_on_r$r - Qwen3-8B 1
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
