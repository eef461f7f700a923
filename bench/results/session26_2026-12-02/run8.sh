# Session 26, call 8 (s26f-bundle, branch wip/silu-balanced: the SwiGLU epilogue on the balanced
# grid too, with main 63b167f's `lathe` as lathe_base): gpu_cuda_gemv_test (GemvSiluTest first,
# now with ringbal and Qwen3-32B's gate|up), then base against this, alternated: Qwen3-32B-FP8
# batch 1/4/16 two rounds, Qwen3-8B-FP8 batch 1/4 one round.
#   scripts/device-bundle.sh --build build --bundle s26f-bundle --xz \
#     --targets "lathe gpu_cuda_gemv_test" --add lathe_base=/tmp/wt_base/build/lathe
set -uo pipefail
b=$PWD/s26f-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
timeout 120 $b/bin/gpu_cuda_gemv_test --gtest_filter='*Silu*' >$OUT/gemv_silu.log 2>&1
echo "gemv silu rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_silu.log | head -3)" >>$S
grep -h "Failure\|FAILED \]" $OUT/gemv_silu.log | head -5 >>$S
timeout 150 $b/bin/gpu_cuda_gemv_test --gtest_filter='-*Silu*' >$OUT/gemv_rest.log 2>&1
echo "gemv rest rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_rest.log | head -3)" >>$S
t0=$SECONDS
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 100 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 32B-FP8_base_r$r lathe_base Qwen3-32B-FP8 1,4,16
  step 32B-FP8_silu_r$r lathe Qwen3-32B-FP8 1,4,16
done
step 8B-FP8_base lathe_base Qwen3-8B-FP8 1,4
step 8B-FP8_silu lathe Qwen3-8B-FP8 1,4
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
