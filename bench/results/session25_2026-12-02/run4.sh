# Session 25, call 4 (s25c-bundle): SwiGLU computed inside the down projection's GEMV tier as it
# stages its input (GemvSiluInput; no SwiGLU launch at decode steps of <= LATHE_FFN_FUSED_SILU
# rows): gpu_cuda_gemv_test (the new SwiGLU cases), gpu_batch_invariance (a sequence alone takes
# the fused path, beside 15 or 31 others the SwiGLU kernel), then decode steps with the SwiGLU
# fusion off (0) against the default (4), alternated, two rounds: Qwen3-8B-FP8 batch 1/2/4/16,
# Qwen3-32B-FP8 and Qwen3-8B BF16 batch 1 and 4.
#   scripts/device-bundle.sh --build build --bundle s25c-bundle --xz \
#     --targets "lathe gpu_cuda_gemv_test gpu_batch_invariance"
set -uo pipefail
b=$PWD/s25c-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
suite() {  # name, shards, tag[, env]
  local name=$1 shards=$2 tag=$3 envs=${4:-} pids=() rc=0 t=$SECONDS
  for ((i = 0; i < shards; i++)); do
    env $envs GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout 240 $b/bin/$name >$W/$tag.$i.log 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  cat $W/$tag.*.log >$OUT/$tag.log
  printf '%-26s rc=%s %4ss passed %s, failed lines %s\n' "$tag" "$rc" "$((SECONDS - t))" \
    "$(grep -h '^\[  PASSED  \]' $W/$tag.*.log | awk '{n += $4} END {print n + 0}')" \
    "$(grep -c '^\[  FAILED  \]' $OUT/$tag.log)" >>$S
  grep -h '^\[  FAILED  \]' $OUT/$tag.log | head -5 >>$S
}
suite gpu_cuda_gemv_test 3 gpu_cuda_gemv_test
suite gpu_batch_invariance 1 gpu_batch_invariance
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_fs0_r$r LATHE_FFN_FUSED_SILU=0 Qwen3-8B-FP8 1,2,4,16
  step 8B-FP8_default_r$r - Qwen3-8B-FP8 1,2,4,16
done
grep -h "ffn_fused_silu\|SwiGLU inside" $W/s_8B-FP8_default_r1.log | head -3 >>$S
for r in 1 2; do
  step 32B-FP8_fs0_r$r LATHE_FFN_FUSED_SILU=0 Qwen3-32B-FP8 1,4
  step 32B-FP8_default_r$r - Qwen3-32B-FP8 1,4
  step 8B_fs0_r$r LATHE_FFN_FUSED_SILU=0 Qwen3-8B 1,4
  step 8B_default_r$r - Qwen3-8B 1,4
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
