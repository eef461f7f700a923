# Session 24, call 2 (s24-bundle, commit 0151052): main with ':wgn' (tiers 1 and 4 as n8 warpgroup
# MMAs), every warpgroup-MMA tier refilling after computing, and `auto` taking :wg on every fp8
# register-ring shape (:wgn on the three-CTA ring). GPU suites as the default; the decode GEMVs in
# context under the new auto (cuBLASLt beside); Qwen3-8B-FP8 and 32B-FP8 steps, the new default
# against the old choices pinned per shape (LATHE_GEMV_SHAPE_VARIANTS), alternated, two rounds;
# then, if time is left, bf16 weights under auto / auto:wg / auto:wg:wgn (auto keeps mma.sync there).
#   scripts/device-bundle.sh --build build --bundle s24-bundle --xz \
#     --targets "lathe gpu_cuda_gemv_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels"
set -uo pipefail
b=$PWD/s24-bundle
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
timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto --after-norm --shapes decode \
  --widths 1,4,8,16 --dtype fp8 >$W/kernels_fp8.txt 2>&1
echo "kernels fp8 rc=$? $((SECONDS - t0))s" >>$S
grep -E " (1|4|8|16) (v:|cublas)" $W/kernels_fp8.txt >>$S
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
old8=LATHE_GEMV_SHAPE_VARIANTS=fp8/6144x4096=ring:k5:g16,fp8/4096x4096=ring:k5:g16,fp8/24576x4096=ring:k2:g16:b3:wg,fp8/4096x12288=ring:k8:g16
old32=LATHE_GEMV_SHAPE_VARIANTS=fp8/10240x5120=ring:k3:g16,fp8/5120x8192=ring:k6:g16,fp8/5120x25600=ring:s4:k6:g16
for r in 1 2; do
  step 8B-FP8_old_r$r $old8 Qwen3-8B-FP8 1,4,8,16
  step 8B-FP8_new_r$r - Qwen3-8B-FP8 1,4,8,16
done
for r in 1 2; do
  (( SECONDS - t0 > 380 )) && break
  step 32B-FP8_old_r$r $old32 Qwen3-32B-FP8 1,4,16
  step 32B-FP8_new_r$r - Qwen3-32B-FP8 1,4,16
done
if (( SECONDS - t0 < 420 )); then
  timeout 100 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg,auto:wg:wgn --after-norm \
    --shapes decode --widths 1,16 --dtype bf16 --no-peers >$W/kernels_bf16.txt 2>&1
  echo "kernels bf16 rc=$? $((SECONDS - t0))s" >>$S
  grep -E " (1|16) (v:|cublas)" $W/kernels_bf16.txt >>$S
fi
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
