# Session 23, call 4 (wg-bundle, commit in wg-bundle/COMMIT): ":wg" after call 3, with the x staging
# at one 4-byte copy per thread and column (fixed offsets) and two chunks per wgmma group.
# gpu_cuda_gemv_test under auto:wg, the fp8 in-context kernel A/B (peers beside), fp8 steps.
set -uo pipefail
b=$PWD/wg-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
pids=(); rc=0
for i in 0 1 2 3; do
  LATHE_GEMV_TEST_VARIANT_FP8=auto:wg LATHE_GEMV_TEST_VARIANT_BF16=auto:wg GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i \
    timeout 200 $b/bin/gpu_cuda_gemv_test >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gpu_cuda_gemv_test_wg.log
echo "gpu_cuda_gemv_test auto:wg rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gpu_cuda_gemv_test_wg.log)" >>$S
timeout 150 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg --after-norm --shapes decode \
  --widths 8,16 --dtype fp8 >$W/kernels_fp8.txt 2>&1
echo "kernels fp8 rc=$? $((SECONDS - t0))s" >>$S
grep -E " (8|16) (v:|cublas)" $W/kernels_fp8.txt >>$S
wg="fp8/6144x4096=auto:wg,fp8/4096x4096=auto:wg,fp8/24576x4096=auto:wg,fp8/4096x12288=auto:wg"
wg="$wg,fp8/10240x5120=auto:wg,fp8/5120x8192=auto:wg,fp8/51200x5120=auto:wg,fp8/5120x25600=auto:wg"
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
step 8B-FP8_default - Qwen3-8B-FP8 8,16
step 8B-FP8_wg LATHE_GEMV_SHAPE_VARIANTS=$wg Qwen3-8B-FP8 8,16
step 32B-FP8_default - Qwen3-32B-FP8 8,16
step 32B-FP8_wg LATHE_GEMV_SHAPE_VARIANTS=$wg Qwen3-32B-FP8 8,16
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
