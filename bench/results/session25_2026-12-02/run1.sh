# Session 25, call 1 (s25-bundle): the split-K attention records merged inside the o projection's
# GEMV (no reduce launch): gpu_cuda_gemv_test (the new merge cases), gpu_batch_invariance (a
# sequence alone takes the merged path, beside others the reduce: the bytes must agree), then
# decode steps with the merge off (0), at 1 row (the default) and at up to 4 rows, alternated, two
# rounds: Qwen3-8B-FP8 batch 1-4 (1k and 16k context), Qwen3-32B-FP8 batch 1 and 4, Qwen3-8B BF16
# batch 1.
#   scripts/device-bundle.sh --build build --bundle s25-bundle --xz \
#     --targets "lathe gpu_cuda_gemv_test gpu_batch_invariance"
set -uo pipefail
b=$PWD/s25-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
suite() {  # name, shards[, gtest filter]
  local name=$1 shards=$2 filter=${3:-*} pids=() rc=0 t=$SECONDS
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout 240 $b/bin/$name --gtest_filter="$filter" \
      >$W/$name.$i.log 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  cat $W/$name.*.log >$OUT/$name.log
  printf '%-22s rc=%s %4ss passed %s, failed lines %s\n' "$name" "$rc" "$((SECONDS - t))" \
    "$(grep -h '^\[  PASSED  \]' $W/$name.*.log | awk '{n += $4} END {print n + 0}')" \
    "$(grep -c '^\[  FAILED  \]' $OUT/$name.log)" >>$S
  grep -h '^\[  FAILED  \]' $OUT/$name.log | head -5 >>$S
}
suite gpu_cuda_gemv_test 3
suite gpu_batch_invariance 1
step() {  # tag, env (or -), model, batches[, input len]
  local tag=$1 envs=$2 model=$3 batches=$4 len=${5:-1024}
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len $len --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_m0_r$r LATHE_ATTN_FUSED_MERGE=0 Qwen3-8B-FP8 1,2,3,4
  step 8B-FP8_m1_r$r - Qwen3-8B-FP8 1,2,3,4
  step 8B-FP8_m4_r$r LATHE_ATTN_FUSED_MERGE=4 Qwen3-8B-FP8 1,2,3,4
done
grep -h "attn_fused_merge\|merge the split-K" $W/s_8B-FP8_m1_r1.log | head -3 >>$S
for r in 1 2; do
  step 8B-FP8_16k_m0_r$r LATHE_ATTN_FUSED_MERGE=0 Qwen3-8B-FP8 1 16384
  step 8B-FP8_16k_m1_r$r - Qwen3-8B-FP8 1 16384
  step 32B-FP8_m0_r$r LATHE_ATTN_FUSED_MERGE=0 Qwen3-32B-FP8 1,4
  step 32B-FP8_m4_r$r LATHE_ATTN_FUSED_MERGE=4 Qwen3-32B-FP8 1,4
  step 8B_m0_r$r LATHE_ATTN_FUSED_MERGE=0 Qwen3-8B 1
  step 8B_m1_r$r - Qwen3-8B 1
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
